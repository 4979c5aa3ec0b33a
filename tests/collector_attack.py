#!/usr/bin/python3
"""Hostile peers for tests/collector_attack.t and tests/collector_udp_identity.t,
built on the frames of collector_hostile.py. Every hostile client binds a
loopback address of its own (127.0.0.2 and up), so a collector that tells
hosts apart can tell them from the real agent on 127.0.0.1. Every loop is
capped in rate and in time.

  collector_attack.py mix PORT SECONDS [UPORT BOOT RING]   random bytes,
      mutated hellos, byte-at-a-time and idle connections, hello-then-idle,
      a reconnect storm, for SECONDS; with UPORT, random datagrams, and
      with BOOT and RING, that identity forged over UDP (udp_forgery);
      prints what it did
  collector_attack.py memory PORT IDS EXECS HOLD   IDS forged identities
      each sending EXECS execs with the longest strings, connections held
      HOLD seconds; prints "sent N"
  collector_attack.py forged PORT SECONDS BOOT RING OFFSET   the real
      agent's identity (BOOT as 32 hex digits) from another host: hellos
      whose start offset jumps past OFFSET, records whose seq jumps
  collector_attack.py crowd PORT N SECONDS     N hello-then-idle connections
      from one host, held SECONDS
  collector_attack.py good PORT N FROM         hostile.py's good agent, from
      host FROM: prints "acked N"
  collector_attack.py udp_vs_tcp PORT UPORT BOOT   a synthetic TCP agent
      (identity BOOT, ring 7) and, between its two halves, UDP hellos and a
      data datagram with a jumped offset for the same identity from another
      host (udp_forgery); prints "acked N"
  collector_attack.py udp_resume PORT UPORT BOOT   the same identity after a
      collector restart: the UDP forgery first, then the TCP agent resumes
  collector_attack.py udp_hijack UPORT BOOT    a UDP agent on 127.0.0.1 and,
      between its two datagrams, the same forgery for its identity
  collector_attack.py udp_flood UPORT BOOT N   N datagrams of execs full of
      control bytes, sent at once
"""
import os
import random
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collector_hostile import EXEC_SIZE, event, exit_event, hello, record  # noqa: E402
from collector_limits import wait_acked  # noqa: E402

DGRAM = struct.Struct('<IHH16sIIQ')
DGRAM_MAGIC = 0x44474956


def conn(port, host, timeout=5):
    return socket.create_connection(('127.0.0.1', port), timeout=timeout,
                                    source_address=(host, 0))


def exec_event(seq, pid, big=True, fill=None):
    """An exec of pid: binary and cwd of 4096 bytes, 1024 of arguments
    (the longest an agent sends), all of byte fill when given, or short
    strings."""
    binary, args, cwd = ((b'/' + b'b' * 4095, b'a' * 1024, b'/' + b'c' * 4095) if big
                         else (b'/bin/true', b'x', b'/'))
    if fill is not None:
        binary, args, cwd = fill * 4096, fill * 1024, fill * 4096
    data = binary + args + cwd
    size = EXEC_SIZE + len(data)
    size += (-size) % 8
    proc = struct.pack('<6I3Q', pid, pid, 1, 0, 0, 0xffffffff, 1000 + seq, 0, 1)
    creds = bytes(EXEC_SIZE - 24 - len(proc) - 32)    # struct vigil_exec_creds: zeros
    fixed = struct.pack('<I6HQII', 0, len(binary), len(args), len(cwd), 0, 0, 0, 0, 1, 0)
    return event(1, size, seq, proc + creds + fixed + data)


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = {}

    def add(self, what):
        with self.lock:
            self.n[what] = self.n.get(what, 0) + 1


def paced(end, period, fn):
    """fn() every period seconds until end; errors are what a hostile
    client expects and are ignored."""
    while time.time() < end:
        t = time.time()
        try:
            fn()
        except OSError:
            pass
        time.sleep(max(0.0, period - (time.time() - t)))


def drain_close(s, wait=0.05):
    s.settimeout(wait)
    try:
        s.recv(4096)
    except OSError:
        pass
    s.close()


def mix(port, secs, uport=None, boot=None, ring=None):
    end = time.time() + secs
    counts = Counts()
    good_hello = hello(name=b'mutant')

    def datagrams():
        """Random datagrams, and the real agent's identity over UDP from
        another host (a hello, data at a jumped offset, another type
        table)."""
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(('127.0.0.13', 0))
        u.sendto(os.urandom(random.randint(1, 2000)), ('127.0.0.1', uport))
        u.close()
        counts.add('random_dgram')
        if boot is not None and random.random() < 0.1:
            udp_forgery(uport, boot, ring, '127.0.0.13')
            counts.add('udp_forgery')

    def random_bytes():
        s = conn(port, '127.0.0.2')
        s.sendall(os.urandom(random.randint(1, 4096)))
        counts.add('random')
        drain_close(s)

    def mutated():
        frame = bytearray(good_hello + record(exit_event(1, 4242)) + record(exit_event(2, 4243)))
        for _ in range(random.randint(1, 8)):
            i = random.randrange(len(frame))
            frame[i] ^= 1 << random.randrange(8)
        s = conn(port, '127.0.0.3')
        s.sendall(bytes(frame))
        counts.add('mutated')
        drain_close(s, 0.2)

    def storm():
        s = conn(port, '127.0.0.8')
        if random.random() < 0.5:
            s.sendall(hello(name=b'storm'))
        counts.add('storm')
        s.close()

    def held(host, first, step, n, label):
        """n connections kept open: `first` bytes on connect, then `step`
        (a byte at a time) every 0.2 s; a closed one is opened again."""
        socks = [None] * n
        while time.time() < end:
            for i in range(n):
                try:
                    if socks[i] is None:
                        socks[i] = [conn(port, host), first(), 0]
                        counts.add(label)
                    s, data, at = socks[i]
                    if at < len(data):
                        k = step or len(data)
                        s.sendall(data[at:at + k])
                        socks[i][2] = at + k
                    s.settimeout(0)
                    try:
                        if s.recv(64) == b'':
                            raise OSError('closed')
                    except BlockingIOError:
                        pass
                except OSError:
                    if socks[i]:
                        socks[i][0].close()
                    socks[i] = None
            time.sleep(0.2)
        for x in socks:
            if x:
                x[0].close()

    threads = [
        threading.Thread(target=paced, args=(end, 0.1, random_bytes)),
        threading.Thread(target=paced, args=(end, 0.1, mutated)),
        threading.Thread(target=paced, args=(end, 0.02, storm)),     # 50/s
        threading.Thread(target=held, args=('127.0.0.4', lambda: hello(name=b'slow') +
                                            record(exit_event(1, 7)), 1, 5, 'slow')),
        threading.Thread(target=held, args=('127.0.0.5', lambda: b'', 0, 5, 'idle')),
        threading.Thread(target=held, args=('127.0.0.6', lambda: hello(name=b'mute'), 0, 5,
                                            'hello_idle')),
    ]
    if uport:
        threads.append(threading.Thread(target=paced, args=(end, 0.05, datagrams)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(' '.join('%s=%d' % kv for kv in sorted(counts.n.items())))


def memory(port, ids, execs, hold):
    """Forged identities, each filling its process cache with long execs
    (none exits), one after the other; every connection is held open for
    hold seconds, so no identity is forgotten to make room for another."""
    sent, socks = 0, []
    for i in range(ids):
        s = conn(port, '127.0.0.10', timeout=30)
        s.sendall(hello(name=b'forger-%d' % i))
        batch = []
        for k in range(execs):
            batch.append(record(exec_event(k + 1, 100000 + k)))
            if len(batch) == 64:
                s.sendall(b''.join(batch))
                batch = []
        s.sendall(b''.join(batch))
        sent += execs
        socks.append(s)
    time.sleep(hold)
    for s in socks:
        drain_close(s, 0.01)
    print('sent', sent)


def forged(port, secs, boot_hex, ring, offset):
    """The real agent's identity from another host: jumped start offsets
    (past the ring, past 2^40), and records with sequence jumps."""
    boot = bytes.fromhex(boot_hex)
    end = time.time() + secs
    n = [0]
    jumps = [offset + (1 << 30), 1 << 40, offset + 4096]

    def once():
        start = jumps[n[0] % len(jumps)]
        start -= start % 8
        seq = 10 ** 9 + 70000 * n[0]
        s = conn(port, '127.0.0.7')
        s.sendall(hello(boot=boot, ring=ring, start=start, name=b'forged') +
                  record(exit_event(seq, 4000)) + record(exit_event(seq + 70000, 4001)))
        n[0] += 1
        drain_close(s, 0.3)

    paced(end, 1.0, once)
    print('forged', n[0])


def crowd(port, n, secs):
    socks = []
    for i in range(n):
        try:
            s = conn(port, '127.0.0.11')
            s.sendall(hello(name=b'crowd'))
            socks.append(s)
        except OSError:
            pass
        time.sleep(0.02)    # 50/s
    time.sleep(secs)
    print('held', len(socks))
    for s in socks:
        s.close()


def good(port, n, host):
    s = conn(port, host)
    stream = b''.join(record(exit_event(i + 1, 40000 + i)) for i in range(n))
    s.sendall(hello() + stream)
    print('acked', wait_acked(s, len(stream)))


def exits(first, n):
    """n exit records, seq first.., pid 50000 + seq."""
    return b''.join(record(exit_event(first + i, 50000 + first + i)) for i in range(n))


def udp_forgery(uport, boot, ring, host='127.0.0.9'):
    """From host, for (boot, ring): a hello and a data datagram at a jumped
    offset with one record (pid 59999), then a hello whose type table has
    no exits."""
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((host, 0))
    jump = 1 << 40
    dst = ('127.0.0.1', uport)
    u.sendto(hello(boot=boot, ring=ring, start=jump, name=b'udp-forger'), dst)
    recs = record(exit_event(10 ** 6, 59999))
    u.sendto(DGRAM.pack(DGRAM_MAGIC, 1, 0, boot, ring, len(recs), jump) + recs, dst)
    u.sendto(hello(boot=boot, ring=ring, start=jump, name=b'udp-forger', types=[(1, 1, EXEC_SIZE)]),
             dst)
    u.close()
    time.sleep(0.3)


def udp_vs_tcp(port, uport, boot):
    boot = bytes.fromhex(boot)
    s = conn(port, '127.0.0.1')
    first = exits(1, 20)
    s.sendall(hello(boot=boot, ring=7, name=b'tcp-agent') + first)
    wait_acked(s, len(first))
    udp_forgery(uport, boot, 7)
    second = exits(21, 20)
    s.sendall(second)
    print('acked', wait_acked(s, len(first) + len(second)))
    s.close()


def udp_resume(port, uport, boot):
    boot = bytes.fromhex(boot)
    udp_forgery(uport, boot, 7)
    start = 40 * len(record(exit_event(1, 1)))
    more = exits(41, 10)
    s = conn(port, '127.0.0.1')
    s.sendall(hello(boot=boot, ring=7, start=start, name=b'tcp-agent') + more)
    print('acked', wait_acked(s, start + len(more)))
    s.close()


def udp_agent(uport, boot, ring, name):
    """A UDP agent's socket on 127.0.0.1, its hello sent and taken."""
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(('127.0.0.1', 0))
    u.sendto(hello(boot=boot, ring=ring, name=name), ('127.0.0.1', uport))
    time.sleep(0.3)
    return u, ('127.0.0.1', uport)


def udp_hijack(uport, boot):
    boot = bytes.fromhex(boot)
    u, dst = udp_agent(uport, boot, 8, b'udp-agent')
    offset = 0
    for first in (61, 71):
        recs = exits(first, 10)
        u.sendto(DGRAM.pack(DGRAM_MAGIC, 1, 0, boot, 8, len(recs), offset) + recs, dst)
        offset += len(recs)
        if first == 61:
            time.sleep(0.2)
            udp_forgery(uport, boot, 8)
    time.sleep(0.3)
    print('sent', offset)


def udp_flood(uport, boot, n):
    """A UDP agent on 127.0.0.1 whose datagrams each hold 6 execs of
    control bytes (a byte becomes 6 in JSON): n of them at once, which the
    collector finds queued in its socket."""
    boot = bytes.fromhex(boot)
    u, dst = udp_agent(uport, boot, 9, b'udp-flood')
    offset, seq = 0, 1
    for _ in range(n):
        recs = b''.join(record(exec_event(seq + k, 70000 + seq + k, fill=b'\x01'))
                        for k in range(6))
        seq += 6
        u.sendto(DGRAM.pack(DGRAM_MAGIC, 1, 0, boot, 9, len(recs), offset) + recs, dst)
        offset += len(recs)
    print('sent', n)


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == 'mix':
        mix(int(a[0]), float(a[1]), *((int(a[2]), bytes.fromhex(a[3]), int(a[4]))
                                      if len(a) > 2 else ()))
    elif cmd == 'memory':
        memory(int(a[0]), int(a[1]), int(a[2]), float(a[3]))
    elif cmd == 'forged':
        forged(int(a[0]), float(a[1]), a[2], int(a[3]), int(a[4]))
    elif cmd == 'crowd':
        crowd(int(a[0]), int(a[1]), float(a[2]))
    elif cmd == 'good':
        good(int(a[0]), int(a[1]), a[2])
    elif cmd == 'udp_vs_tcp':
        udp_vs_tcp(int(a[0]), int(a[1]), a[2])
    elif cmd == 'udp_resume':
        udp_resume(int(a[0]), int(a[1]), a[2])
    elif cmd == 'udp_hijack':
        udp_hijack(int(a[0]), a[1])
    elif cmd == 'udp_flood':
        udp_flood(int(a[0]), a[1], int(a[2]))
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main()
