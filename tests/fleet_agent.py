#!/usr/bin/python3
"""Synthetic agents for the fleet tests (tests/fleet/*.t) and figures:
each speaks the wire format of docs/stream.md (tests/collector_hostile.py)
as vigild does where it matters here: its records stay in its "ring" until
acknowledged, and after a lost connection it connects again, to the next
collector of its list, and resumes at its last acknowledgement.

  fleet_agent.py PORTS AGENTS EVENTS RATE SECS [NAME]
    PORTS   collectors' ports on 127.0.0.1, comma-separated, tried in turn
    AGENTS  agents, one thread each, node names NAME0, NAME1, ...
    EVENTS  exit events each (sequence numbers 1..EVENTS, pid = sequence)
    RATE    events per second each, at most (capped at 20000)
    SECS    gives up after that long (capped at 600)
FLEET_LOSE_ACKS=K in the environment: an agent that connects again resumes
K records before its last ack, as if the last acks its collector sent had
been lost with it (the records go to the next collector a second time).
Prints one line per agent ("agent NAME acked N of M, K connections") and a
summary: events/s over all, and the delay from an event's making (its
"ring" time) to the ack that covers it: p50, p99, max.
"""
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collector_hostile import exit_event, hello, record   # the wire format, once

REC = len(record(exit_event(1, 1)))


class Agent(threading.Thread):
    def __init__(self, ports, name, events, rate, deadline):
        super().__init__(daemon=True)
        self.ports, self.node, self.events, self.rate = ports, name, events, rate
        self.deadline = deadline
        self.boot = os.urandom(16)
        self.made = []          # monotonic time each event was made
        self.acked = 0          # records acknowledged
        self.conns = 0
        self.delays = []

    def make(self, now, start):
        want = min(self.events, int((now - start) * self.rate) + 1)
        while len(self.made) < want:
            self.made.append(now)

    def session(self, port, start):
        s = socket.create_connection(('127.0.0.1', port), timeout=2)
        sent = self.acked
        if self.conns:
            sent = max(0, sent - int(os.environ.get('FLEET_LOSE_ACKS', '0')))
        self.conns += 1
        s.settimeout(0.005)
        s.sendall(hello(boot=self.boot, ring=3, start=sent * REC, name=self.node,
                        ring_size=1 << 26))
        buf = b''
        while self.acked < self.events and time.monotonic() < self.deadline:
            now = time.monotonic()
            self.make(now, start)
            if sent < len(self.made):
                s.settimeout(2)
                s.sendall(b''.join(record(exit_event(i + 1, i + 1))
                                   for i in range(sent, len(self.made))))
                s.settimeout(0.005)
                sent = len(self.made)
            try:
                b = s.recv(4096)
            except socket.timeout:
                continue
            if not b:
                raise ConnectionError('closed')
            buf += b
            now = time.monotonic()
            while len(buf) >= 16:
                magic, _, off = struct.unpack('<IIQ', buf[:16])
                buf = buf[16:]
                if magic != 0x4b434156:
                    raise ConnectionError('bad ack')
                upto = off // REC
                if upto > len(self.made):
                    raise ConnectionError('ack past what was sent')
                for i in range(self.acked, upto):
                    self.delays.append(now - self.made[i])
                self.acked = max(self.acked, upto)
        s.close()

    def run(self):
        start, i = time.monotonic(), 0
        while self.acked < self.events and time.monotonic() < self.deadline:
            try:
                self.session(self.ports[i % len(self.ports)], start)
            except OSError:
                i += 1          # the next collector of the list
                time.sleep(0.2)


def main():
    ports = [int(p) for p in sys.argv[1].split(',')]
    n, events = int(sys.argv[2]), int(sys.argv[3])
    rate = min(float(sys.argv[4]), 20000.0)
    secs = min(float(sys.argv[5]), 600.0)
    prefix = sys.argv[6] if len(sys.argv) > 6 else 'fleet'
    t0 = time.monotonic()
    agents = [Agent(ports, b'%s%d' % (prefix.encode(), i), events, rate, t0 + secs)
              for i in range(n)]
    for a in agents:
        a.start()
    for a in agents:
        a.join()
    wall = time.monotonic() - t0
    delays = sorted(d for a in agents for d in a.delays)
    for a in agents:
        print('agent %s acked %d of %d, %d connections' % (a.node.decode(), a.acked, a.events,
                                                           a.conns))
    q = lambda f: delays[min(len(delays) - 1, int(f * len(delays)))] * 1000 if delays else 0
    total = sum(a.acked for a in agents)
    print('all: %d of %d acked in %.1f s: %.0f events/s; ring to ack ms p50 %.1f p99 %.1f max %.1f'
          % (total, n * events, wall, total / wall, q(0.5), q(0.99), q(1.0)))
    return 0 if total == n * events else 1


if __name__ == '__main__':
    sys.exit(main())
