#!/usr/bin/python3
"""Crafted streams for tests/collector_hostile.t: speaks the wire format of
docs/stream.md byte by byte, rightly or wrongly, to a collector on loopback.

  collector_hostile.py PORT CASE   prints "closed" when the collector closed
                                   the connection, "open" when it did not,
                                   "acked N" for a good stream
"""
import os
import re
import socket
import struct
import sys
import time

HELLO = struct.Struct('<8sHHI16sIIQQqIIIHH')
# The schema and the exec record's fixed size, as this tree's events.h says.
_H = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'include', 'vigil',
                       'events.h')).read()
SCHEMA = (int(re.search(r'#define VIGIL_SCHEMA_MAJOR (\d+)', _H).group(1)) |
          int(re.search(r'#define VIGIL_SCHEMA_MINOR (\d+)', _H).group(1)) << 16)
EXEC_SIZE = int(re.search(r'sizeof\(struct vigil_exec\) == (\d+)', _H).group(1))
TYPES = [(1, 1, EXEC_SIZE), (2, 0, 80), (3, 0, 72), (64, 0, 48)]  # exec (variable), exit, fork, loss


def hello(version=1, boot=None, ring=7, start=0, name=b'hostile-node', hello_len=None,
          schema=SCHEMA, types=TYPES, ring_size=1 << 20):
    table = b''.join(struct.pack('<HHI', *t) for t in types)
    body_len = HELLO.size + len(table) + len(name)
    pad = (-body_len) % 8
    if hello_len is None:
        hello_len = body_len + pad
    h = HELLO.pack(b'VIGILSTR', version, hello_len, schema, boot or os.urandom(16), ring, 1,
                   start, ring_size, 0, os.getpid(), os.getuid(), os.getgid(), len(name), len(types))
    return h + table + name + b'\0' * pad


def event(etype, size, seq, body=b''):
    ev = struct.pack('<HHIQQ', etype, size, 0, seq, time.monotonic_ns()) + body
    return ev + b'\0' * (size - len(ev))


# A health record (type 60, variable: 32 bytes and a record of another
# kind, header first) and a heartbeat (56, 88 bytes) in the hello's table.
HEALTH_TYPES = TYPES + [(60, 1, 32), (56, 0, 88)]


def health(seq, inner):
    return event(60, 32 + len(inner), seq, struct.pack('<Q', 0) + inner)


def record(ev, flags=0, length=None):
    n = len(ev) if length is None else length
    return struct.pack('<II', n | flags, 0) + ev + b'\0' * ((-len(ev)) % 8)


def exit_event(seq, pid):
    proc = struct.pack('<6I3Q', pid, pid, 1, 0, 0, 0xffffffff, 1000 + seq, 0, 1)
    return event(2, 80, seq, proc + struct.pack('<II', 0, 0))


def connect(port):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    return s


def closed_after(s, data, wait=3.0):
    """Sends data; True when the collector closes the connection."""
    try:
        s.sendall(data)
    except OSError:
        return True
    s.settimeout(wait)
    end = time.time() + wait
    try:
        while time.time() < end:
            b = s.recv(4096)
            if not b:
                return True
    except socket.timeout:
        return False
    except OSError:
        return True
    return False


def good(port, n, first=None):
    """A well-behaved agent: n exit events (after `first`, a hello and
    records of the caller's); prints the last offset acked."""
    s = connect(port)
    stream = b''.join(record(exit_event(i + 1, 40000 + i)) for i in range(n))
    if first is not None:
        h, stream = first
    else:
        h = hello()
    s.sendall(h + stream)
    want, acked, buf = len(stream), 0, b''
    s.settimeout(5)
    while acked < want:
        b = s.recv(64)
        if not b:
            break
        buf += b
        while len(buf) >= 16:
            magic, flags, off = struct.unpack('<IIQ', buf[:16])
            buf = buf[16:]
            if magic != 0x4b434156:
                print('bad ack')
                return
            acked = off
    print('acked', acked)


def main():
    port, case = int(sys.argv[1]), sys.argv[2]
    ok_rec = record(exit_event(1, 4242))
    if case == 'good':
        return good(port, int(sys.argv[3]))
    if case == 'newer_minor':
        # An agent of the next minor version: one more kind (type 15, 32
        # bytes) in its table, its records between exits, seq numbers in
        # one run across both: 1 exit, 2 new kind, 3 exit, ...
        n = int(sys.argv[3])
        h = hello(schema=SCHEMA + (1 << 16), types=TYPES + [(15, 0, 32)])
        recs = b''.join(record(exit_event(s, 41000 + s) if s % 2 else event(15, 32, s))
                        for s in range(1, 2 * n))
        return good(port, 0, (h, recs))
    if case == 'slow':
        # Many connections, each with a hello and most of a record, never
        # finished; held open for argv[4] seconds.
        conns = []
        for _ in range(int(sys.argv[3])):
            s = connect(port)
            s.sendall(hello() + record(exit_event(1, 1))[:60])
            conns.append(s)
        time.sleep(float(sys.argv[4]))
        print('closed' if all(closed_after(s, b'', 0.2) for s in conns) else 'open')
        return
    data = {
        'garbage': os.urandom(4096),
        'bad_version': hello(version=9),
        'bad_schema': hello(schema=99),
        'newer_major': hello(schema=SCHEMA + 1),
        'hello_len_huge': hello(hello_len=60000),
        'type_size_mismatch': hello(types=[(2, 0, 88)]),
        'oversized_len': hello() + struct.pack('<II', 1 << 29, 0) + b'\0' * 64,
        'len_past_limit': hello() + struct.pack('<II', 60000, 0) + b'\0' * 64,
        'busy_record': hello() + record(exit_event(1, 1), flags=1 << 31),
        'unknown_type': hello() + record(event(99, 32, 1)),
        'size_mismatch': hello() + record(event(2, 72, 1)),
        'short_event': hello() + record(b'\0' * 8),
        'truncated_then_close': hello() + ok_rec[:40],
        'no_hello': b'',
        # health records: what they wrap is checked like a record of its own
        'health_heartbeat': hello(types=HEALTH_TYPES) + record(health(1, event(56, 88, 1))),
        'health_empty': hello(types=HEALTH_TYPES) + record(health(1, b'')),
        'health_nested': hello(types=HEALTH_TYPES) +
        record(health(1, health(2, event(56, 88, 1)))),
        'health_inner_size': hello(types=HEALTH_TYPES) + record(health(1, event(56, 80, 1))),
        'health_inner_claims_more': hello(types=HEALTH_TYPES) +
        record(health(1, event(56, 88, 1)[:80])),
        'health_unknown_inner': hello(types=HEALTH_TYPES) + record(health(1, event(62, 24, 1))),
        'health_unknown_inner_size': hello(types=HEALTH_TYPES) +
        record(health(1, struct.pack('<HHIQQ', 62, 65528, 0, 1, 0))),
        'health_short_header': hello(types=HEALTH_TYPES) + record(health(1, b'\0' * 8)),
    }[case]
    s = connect(port)
    if case == 'truncated_then_close':
        s.sendall(data)
        s.close()
        print('sent')
        return
    print('closed' if closed_after(s, data, 4.0) else 'open')


if __name__ == '__main__':
    main()
