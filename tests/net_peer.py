#!/usr/bin/python3
"""A TCP client or server with known byte counts and a chosen way to close,
for the network event tests (tests/net_*.t, tests/report_*.t).

  net_peer.py server PORT MODE IN OUT DIR [COUNT]
  net_peer.py client ADDR PORT MODE OUT IN DIR [COUNT [GAP]]

MODE says who closes and how: client_fin, server_fin, client_rst,
server_rst, client_exits (the client exits with the socket open; the
server closes 0.5 s later, so the client's close completes after its
exit), refused (the client expects ECONNREFUSED: run no server), or
fastopen (the client's data rides in its SYN, TCP Fast Open, then it
closes; the namespaces' net.ipv4.tcp_fastopen must allow it).
Each side writes its pid to DIR/<role>.pid; the server touches
DIR/server.ready once it listens. COUNT connections are made one after
another, GAP seconds apart. With NET_PEER_V6=1 in the environment the
server listens on IPv6 (ADDR is then an IPv6 address).
"""
import os
import socket
import struct
import sys
import time


def recv_exact(s, n):
    got = 0
    while got < n:
        b = s.recv(min(65536, n - got))
        if not b:
            raise SystemExit(f"peer closed after {got} of {n} bytes")
        got += len(b)


def wait_eof(s):
    while s.recv(65536):
        pass


def abort(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def server(port, mode, n_in, n_out, d, count):
    v6 = os.environ.get("NET_PEER_V6") == "1"
    ls = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("::" if v6 else "0.0.0.0", port))
    if mode == "fastopen":
        ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
    ls.listen(64)
    open(os.path.join(d, "server.ready"), "w").close()
    if mode == "prefork":
        # A pre-forked worker: the listener's owner never touches the
        # connection; the worker accepts it and does all its I/O.
        worker = os.fork()
        if worker:
            os.waitpid(worker, 0)
            ls.close()
            return
        open(os.path.join(d, "worker.pid"), "w").write(str(os.getpid()))
    for _ in range(count):
        s, _ = ls.accept()
        recv_exact(s, n_in)
        s.sendall(b"s" * n_out)
        if mode == "server_fin":
            s.shutdown(socket.SHUT_WR)
            wait_eof(s)
            s.close()
        elif mode == "server_fin_client_rst":
            s.shutdown(socket.SHUT_WR)
            try:
                wait_eof(s)
            except ConnectionResetError:
                pass
            s.close()
        elif mode == "server_rst":
            time.sleep(0.1)  # the client has read everything
            abort(s)
        elif mode == "client_exits":
            wait_eof(s)
            time.sleep(0.5)
            s.close()
        else:  # the client ends it: wait for its FIN or RST
            try:
                wait_eof(s)
            except ConnectionResetError:
                pass
            s.close()
    ls.close()
    if mode == "prefork":
        os._exit(0)


def client(addr, port, mode, n_out, n_in, d, count, gap):
    for i in range(count):
        if i:
            time.sleep(gap)
        if mode == "refused":
            try:
                socket.create_connection((addr, port))
            except ConnectionRefusedError:
                continue
            raise SystemExit("connect was not refused")
        if mode == "fastopen":
            s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
            s.sendto(b"c" * n_out, socket.MSG_FASTOPEN, (addr, port))
        else:
            s = socket.create_connection((addr, port))
            s.sendall(b"c" * n_out)
        recv_exact(s, n_in)
        if mode in ("client_fin", "fastopen"):
            s.close()
        elif mode == "client_rst":
            abort(s)
        elif mode == "client_exits":
            s.shutdown(socket.SHUT_WR)
            os._exit(0)  # the socket is still open: the exit closes it
        elif mode == "server_fin":
            wait_eof(s)
            s.close()
        elif mode == "server_fin_client_rst":
            wait_eof(s)
            abort(s)  # from CLOSE_WAIT: the kernel closes, then sends its RST
        elif mode == "server_rst":
            try:
                wait_eof(s)
            except ConnectionResetError:
                pass
            s.close()


def main():
    role = sys.argv[1]
    a = sys.argv[2:]
    if role == "server":
        port, mode, n_in, n_out, d = int(a[0]), a[1], int(a[2]), int(a[3]), a[4]
        count = int(a[5]) if len(a) > 5 else 1
        open(os.path.join(d, "server.pid"), "w").write(str(os.getpid()))
        server(port, mode, n_in, n_out, d, count)
    else:
        addr, port, mode, n_out, n_in, d = a[0], int(a[1]), a[2], int(a[3]), int(a[4]), a[5]
        count = int(a[6]) if len(a) > 6 else 1
        gap = float(a[7]) if len(a) > 7 else 0
        open(os.path.join(d, "client.pid"), "w").write(str(os.getpid()))
        client(addr, port, mode, n_out, n_in, d, count, gap)


if __name__ == "__main__":
    main()
