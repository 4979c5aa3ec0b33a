#!/usr/bin/python3
"""Peers for the collector's limit tests (collector_commit.t,
collector_conns.t, collector_keepalive.t, collector_emfile.t). The wire
format is tests/collector_hostile.py's.

  collector_limits.py HOST PORT identities N      N streams, one after the other, each
                                                  a new (boot, ring) with one record;
                                                  prints how many were acknowledged
  collector_limits.py HOST PORT stream BOOT START N [FIRST_SEQ [HOLD]]
                                                  one stream of boot id BOOT (32 hex
                                                  digits) from ring offset START: N exit
                                                  events; prints "acked OFFSET", then
                                                  holds the connection HOLD seconds
  collector_limits.py HOST PORT idle N SECS [SRC] N connections (from address SRC) that
                                                  send a hello, then nothing, held SECS;
                                                  prints "open K" (still open at the end)
  collector_limits.py HOST PORT hold N SECS       N connections that send nothing, held
                                                  SECS (or until stdin closes)
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collector_hostile import exit_event, hello, record  # noqa: E402  the wire format, once

ACK = struct.Struct('<IIQ')


def connect(host, port, src=None, timeout=5):
    s = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect((host, port))
    return s


def wait_acked(s, want, secs=5.0):
    """The last offset acknowledged on s once want is, or when s closes or
    secs pass."""
    acked, buf, end = 0, b'', time.time() + secs
    while acked < want and time.time() < end:
        s.settimeout(max(0.05, end - time.time()))
        try:
            b = s.recv(64)
        except (socket.timeout, OSError):
            break
        if not b:
            break
        buf += b
        while len(buf) >= ACK.size:
            magic, _, off = ACK.unpack(buf[:ACK.size])
            buf = buf[ACK.size:]
            if magic != 0x4b434156:
                return -1
            acked = off
    return acked


def stream(host, port, boot, start, n, first_seq=1, hold=0):
    recs = b''.join(record(exit_event(first_seq + i, 50000 + i)) for i in range(n))
    s = connect(host, port)
    s.sendall(hello(boot=boot, start=start) + recs)
    acked = wait_acked(s, start + len(recs))
    if hold:
        print('acked', acked, flush=True)
        time.sleep(hold)
    s.close()
    return acked


def main():
    host, port, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if case == 'identities':
        n, ok = int(sys.argv[4]), 0
        for _ in range(n):
            want = len(record(exit_event(1, 1)))
            ok += stream(host, port, os.urandom(16), 0, 1) == want
        print(ok)
    elif case == 'stream':
        boot, start, n = bytes.fromhex(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
        first = int(sys.argv[7]) if len(sys.argv) > 7 else 1
        hold = float(sys.argv[8]) if len(sys.argv) > 8 else 0
        acked = stream(host, port, boot, start, n, first, hold)
        if not hold:
            print('acked', acked)
    elif case in ('idle', 'hold'):
        n, secs = int(sys.argv[4]), float(sys.argv[5])
        src = sys.argv[6] if len(sys.argv) > 6 else None
        conns = []
        for _ in range(n):
            try:
                s = connect(host, port, src, timeout=2)
                if case == 'idle':
                    s.sendall(hello())
                conns.append(s)
            except OSError:
                pass
        print('connected', len(conns), flush=True)
        time.sleep(secs)
        still = 0
        for s in conns:
            s.setblocking(False)
            try:
                still += s.recv(1) != b''
            except BlockingIOError:
                still += 1
            except OSError:
                pass
        print('open', still)


if __name__ == '__main__':
    main()
