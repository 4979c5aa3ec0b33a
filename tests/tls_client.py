#!/usr/bin/python3
"""TLS peers for tests/collector_tls.t: the stream of docs/stream.md (the
helpers of collector_hostile.py) inside TLS 1.3, rightly or wrongly, to a
collector's tls:// listener on loopback. PKI is the folder of tests/tls_lib.sh
(ca.pem signs the collector; CERT names PKI/CERT.pem and PKI/CERT.key).

  tls_client.py PORT PKI plain                 clear-text hello to the TLS port
  tls_client.py PORT PKI nocert                no client certificate
  tls_client.py PORT PKI cert CERT             handshake with CERT, then a hello
                                               of CERT's name (refused or not)
  tls_client.py PORT PKI tls12 CERT           a client of TLS 1.2 at most
  tls_client.py PORT PKI distrust CERT CA      a client that trusts only PKI/CA.pem
                                               (not the collector's CA)
  tls_client.py PORT PKI hangup                connects and closes at once
  tls_client.py PORT PKI stall                 half a ClientHello, then nothing:
                                               prints "closed after S s"
  tls_client.py PORT PKI garbage CERT          random bytes in clear after the
                                               handshake
  tls_client.py PORT PKI garbage_inside CERT   random bytes inside TLS
  tls_client.py PORT PKI good CERT NAME BOOT RING N [START]
                                               N exit events as node NAME,
                                               stream (BOOT hex, RING): "acked OFF"
                                               or "closed"
  tls_client.py PORT PKI hold CERT N SECS      N connections stalled in a record
  tls_client.py PORT PKI server CERT           the CN of the collector's certificate
  tls_client.py PORT PKI flood CERT N          N full handshakes one after another:
                                               "done D of N in S s"
  tls_client.py PORT PKI floodfor CERT RATE SECS
                                               full handshakes, at most RATE a
                                               second for SECS s: as flood
  tls_client.py PORT PKI deaf CERT NAME BOOT RING N SECS
                                               N exit events one at a time, none
                                               of the acks read for SECS s (a
                                               tiny receive buffer), then read:
                                               "acked OFF" or "closed"

TLS_SRC=ADDR connects from ADDR (another loopback address) instead of
127.0.0.1. TLS_TIMED=1: good also says on stderr how long it took from its
connect to its ack ("took S s").

Every case but good and stall prints "closed" when the collector closed
the connection, "open" when it did not.
"""
import os
import socket
import ssl
import sys
import time

from collector_forge import acked_or_closed
from collector_hostile import closed_after, exit_event, hello, record


def context(pki, cert=None, ca='ca', version=ssl.TLSVersion.TLSv1_3):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ctx.maximum_version = version
    ctx.load_verify_locations(os.path.join(pki, ca + '.pem'))
    if cert:
        ctx.load_cert_chain(os.path.join(pki, cert + '.pem'), os.path.join(pki, cert + '.key'))
    return ctx


def tls_connect(port, pki, cert=None, **kw):
    """A TLS connection; None when the handshake already failed (in TLS 1.3
    the client's side usually ends before the server has checked it)."""
    raw = socket.create_connection(('127.0.0.1', port), timeout=5,
                                   source_address=(os.environ.get('TLS_SRC', '127.0.0.1'), 0))
    try:
        return context(pki, cert, **kw).wrap_socket(raw, server_hostname='127.0.0.1')
    except (ssl.SSLError, OSError):
        return None


def verdict(s, data):
    print('closed' if s is None or closed_after(s, data, 4.0) else 'open')


def stall(port, pki):
    """Sends half of a real ClientHello and waits to be closed."""
    ctx = context(pki)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname='127.0.0.1')
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    client_hello = out.read()
    s = socket.create_connection(('127.0.0.1', port), timeout=30)
    t0 = time.time()
    s.sendall(client_hello[:len(client_hello) // 2])
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    print('closed after %.1f s' % (time.time() - t0))


def deaf(port, pki, args):
    """An agent that stops reading: the collector's acks back up until its
    socket takes no more and TLS must wait to write (SSL_ERROR_WANT_WRITE),
    then it reads them all."""
    cert, name, boot, ring, n, secs = args[0], args[1].encode(), bytes.fromhex(args[2]), \
        int(args[3]), int(args[4]), float(args[5])
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)	# the kernel's least
    raw.settimeout(5)
    raw.connect(('127.0.0.1', port))
    try:
        s = context(pki, cert).wrap_socket(raw, server_hostname='127.0.0.1')
        s.sendall(hello(name=name, boot=boot, ring=ring))
        total, end = 0, time.monotonic() + secs
        for i in range(n):		# one record a write: one ack each
            r = record(exit_event(i + 1, 50000 + i))
            s.sendall(r)
            total += len(r)
            time.sleep(max(0.0, min(0.002, end - time.monotonic())))
        time.sleep(max(0.0, end - time.monotonic()))
    except OSError:
        return print('closed')
    print(acked_or_closed(s, total))


def main():
    port, pki, case = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    args = sys.argv[4:]
    if case == 'plain':
        s = socket.create_connection(('127.0.0.1', port), timeout=5)
        return verdict(s, hello() + record(exit_event(1, 4242)))
    if case == 'nocert':
        return verdict(tls_connect(port, pki), hello())
    if case == 'stall':
        return stall(port, pki)
    if case == 'hangup':
        socket.create_connection(('127.0.0.1', port), timeout=5).close()
        return print('closed')
    if case == 'tls12':
        return verdict(tls_connect(port, pki, args[0], version=ssl.TLSVersion.TLSv1_2), hello())
    if case == 'distrust':
        return verdict(tls_connect(port, pki, args[0], ca=args[1]), hello())
    if case == 'deaf':
        return deaf(port, pki, args)
    t0 = time.monotonic()
    s = tls_connect(port, pki, args[0])
    if case == 'cert':
        # The certificate's first DNS SAN is its file name's node here.
        name = (args[1] if len(args) > 1 else args[0]).encode()
        return verdict(s, hello(name=name))
    if case == 'garbage':
        if s is None:
            return print('closed')
        time.sleep(0.3)		# past the handshake: the server's tickets came
        raw = socket.socket(fileno=os.dup(s.fileno()))
        raw.sendall(os.urandom(4096))
        raw.close()
        return verdict(s, b'')
    if case == 'server':
        if s is None:
            return print('closed')
        return print(dict(x[0] for x in s.getpeercert()['subject'])['commonName'])
    if case == 'garbage_inside':
        return verdict(s, os.urandom(4096))
    if case == 'good':
        name, boot, ring, n = args[1].encode(), bytes.fromhex(args[2]), int(args[3]), int(args[4])
        start = int(args[5]) if len(args) > 5 else 0
        if s is None:
            return print('closed')
        stream = b''.join(record(exit_event(i + 1, 40000 + i)) for i in range(n))
        try:
            s.sendall(hello(name=name, boot=boot, ring=ring, start=start) + stream)
        except OSError:
            return print('closed')
        print(acked_or_closed(s, start + len(stream)))
        if os.environ.get('TLS_TIMED'):
            print('took %.3f s' % (time.monotonic() - t0), file=sys.stderr)
        return None
    if case == 'floodfor':
        # CERT RATE SECS: full handshakes at most RATE a second for SECS
        # seconds (the first is the one made above).
        if s is not None:
            s.close()
        rate, secs = float(args[1]), float(args[2])
        n, done, t0 = 1, int(s is not None), time.monotonic()
        while time.monotonic() - t0 < secs:
            wait = t0 + n / rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            n += 1
            c = tls_connect(port, pki, args[0])
            if c is not None:
                done += 1
                c.close()
        return print('done %d of %d in %.1f s' % (done, n, time.monotonic() - t0))
    if case == 'flood':
        if s is not None:
            s.close()
        n, done, t0 = int(args[1]), 0, time.monotonic()
        for _ in range(n - 1):
            c = tls_connect(port, pki, args[0])	# None: closed before a handshake
            if c is not None:
                done += 1
                c.close()
        return print('done %d of %d in %.1f s' % (done + (s is not None), n, time.monotonic() - t0))
    if case == 'hold':
        # args: CERT N SECS: N connections, each with a hello and most of a
        # record, held SECS seconds: what TLS sessions cost the collector.
        conns = []
        for i in range(int(args[1])):
            c = tls_connect(port, pki, args[0])
            c.sendall(hello(name=args[0].encode(), ring=100 + i) + record(exit_event(1, 1))[:60])
            conns.append(c)
        time.sleep(float(args[2]))
        print('held %d' % len(conns))
        return
    sys.exit('unknown case ' + case)


if __name__ == '__main__':
    main()
