#!/usr/bin/python3
"""A private TLS peer for tests/stream_tls_agent.t: a minimal collector that
speaks the stream of docs/stream.md inside mutual TLS 1.3.

  tls_peer.py PORT CERT KEY CA OUT [DROP]

Listens on 127.0.0.1:PORT (0: any; the port is printed as "listening on
PORT"), requires a client certificate signed by CA, serves one connection
at a time, forever. For each connection it logs the client's first DNS SAN
and the hello's node name and start offset; for each record it writes to OUT
one line "OFFSET TYPE TEXT" (TEXT: the event's printable runs, so exec
arguments show), skipping records below what it already wrote for that
stream (a resend), and acks after each read what it wrote. With DROP, the
first connection is closed once DROP records were written, before their ack
(the agent sends them again, and they are skipped as already written).
"""
import os
import re
import socket
import ssl
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collector_hostile import HELLO  # noqa: E402  the hello's fixed part

ACK = struct.Struct('<IIQ')
ACK_MAGIC = 0x4b434156


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def serve(conn, out, written, drop):
    buf = b''
    hello = None
    offset = 0
    while True:
        data = conn.recv(1 << 16)
        if not data:
            return 'closed'
        buf += data
        if hello is None:
            if len(buf) < HELLO.size:
                continue
            f = HELLO.unpack_from(buf)
            hello_len, start, name_len, ntypes = f[2], f[7], f[13], f[14]
            if len(buf) < hello_len:
                continue
            name = buf[HELLO.size + 8 * ntypes:HELLO.size + 8 * ntypes + name_len].decode()
            hello = (f[4], f[5])  # boot id, ring id: the stream
            offset = start
            log(f'hello node={name} start={start}')
            buf = buf[hello_len:]
        acked = None
        while len(buf) >= 8:
            length, = struct.unpack_from('<I', buf)
            n = length & 0x3fffffff
            span = (n + 8 + 7) & ~7
            if len(buf) < span:
                break
            if offset >= written.get(hello, 0) and not length & (1 << 30):
                ev = buf[8:8 + n]
                etype, = struct.unpack_from('<H', ev)
                text = ' '.join(s.decode() for s in re.findall(rb'[ -~]{4,}', ev[24:]))
                out.write(f'{offset} {etype} {text}\n')
            offset += span
            written[hello] = max(written.get(hello, 0), offset)
            buf = buf[span:]
            if drop and drop[0] and len(drop) == 1:
                drop[0] -= 1
                if not drop[0]:
                    drop.append('done')
                    out.flush()
                    return 'dropped by the peer'
            acked = offset
        if acked is not None:
            out.flush()
            conn.sendall(ACK.pack(ACK_MAGIC, 0, acked))


def main():
    port, cert, key, ca, out_path = sys.argv[1:6]
    drop = [int(sys.argv[6])] if len(sys.argv) > 6 else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', int(port)))
    ls.listen(8)
    log(f'listening on {ls.getsockname()[1]}')
    written = {}
    with open(out_path, 'a') as out:
        while True:
            raw, addr = ls.accept()
            try:
                conn = ctx.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError) as e:
                log(f'handshake refused: {e}')
                raw.close()
                continue
            peer = conn.getpeercert()
            dns = [v for k, v in peer.get('subjectAltName', ()) if k == 'DNS']
            cn = [v for rdn in peer.get('subject', ()) for k, v in rdn if k == 'commonName']
            log(f'accepted {conn.version()} client dns={dns[0] if dns else "-"} '
                f'cn={cn[0] if cn else "-"} reused={conn.session_reused}')
            try:
                why = serve(conn, out, written, drop)
            except (ssl.SSLError, OSError) as e:
                why = str(e)
            log(f'connection ended: {why}')
            conn.close()


if __name__ == '__main__':
    main()
