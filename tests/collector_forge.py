#!/usr/bin/python3
"""Forged streams for tests/collector_identity.t: a sender that claims an
identity (boot id, ring id) it does not own, from an address of its choosing.

  collector_forge.py PORT type0          a hello that declares type 0, then a
                                         record of type 65535 (crashed the collector)
  collector_forge.py PORT type200        a good hello, then a record of type 65535
  collector_forge.py PORT forge SRC BOOT RING START SEQ N [NAME]
                                         from address SRC, BOOT (32 hex digits)
                                         and RING's hello at ring offset START
                                         naming node NAME (default forger),
                                         then N exit events numbered from SEQ
Prints "closed" when the collector closed the connection, else "acked N"
(the last offset acknowledged).
"""
import socket
import struct
import sys
import time

from collector_hostile import TYPES, closed_after, event, exit_event, hello, record


def acked_or_closed(s, want):
    s.settimeout(5)
    acked, buf, end = 0, b'', time.time() + 5
    while acked < want and time.time() < end:
        try:
            b = s.recv(64)
        except socket.timeout:
            break
        except OSError:
            return 'closed'
        if not b:
            return 'closed' if not acked else 'acked %d' % acked
        buf += b
        while len(buf) >= 16:
            acked = struct.unpack('<IIQ', buf[:16])[2]
            buf = buf[16:]
    return 'acked %d' % acked


def main():
    port, case = int(sys.argv[1]), sys.argv[2]
    if case in ('type0', 'type200'):
        types = TYPES + [(0, 0, 80)] if case == 'type0' else TYPES
        s = socket.create_connection(('127.0.0.1', port), timeout=5)
        print('closed' if closed_after(s, hello(types=types) + record(event(65535, 80, 1)), 3.0)
              else 'open')
        return
    src, boot, ring, start, seq, n = sys.argv[3], bytes.fromhex(sys.argv[4]), int(sys.argv[5]), \
        int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
    s = socket.create_connection(('127.0.0.1', port), timeout=5, source_address=(src, 0))
    stream = b''.join(record(exit_event(seq + i, 40000 + i)) for i in range(n))
    try:
        name = sys.argv[9].encode() if len(sys.argv) > 9 else b'forger'
        s.sendall(hello(boot=boot, ring=ring, start=start, name=name) + stream)
    except OSError:
        print('closed')
        return
    print(acked_or_closed(s, start + len(stream)))
    s.close()


if __name__ == '__main__':
    main()
