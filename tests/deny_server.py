#!/usr/bin/python3
# The deny tests' server (tests/deny_raw.t, tests/deny_carried.t): listens on
# 127.0.0.1 ports 7001 (the port their rule denies) and 7009 (one it does
# not), in the namespace it is started in; what each connection receives is
# appended to DIR/recv.PORT. DIR/server.ready says it listens.
#   deny_server.py DIR
import os, select, socket, sys
d = sys.argv[1]
ls = {}
for port in (7001, 7009):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(16); ls[s] = port
open(os.path.join(d, "server.ready"), "w").close()
conns = {}
while True:
    r, _, _ = select.select(list(ls) + list(conns), [], [])
    for s in r:
        if s in ls:
            c, _ = s.accept(); conns[c] = ls[s]
        else:
            try:
                data = s.recv(1000)
            except OSError:	# reset: a destroyed peer
                data = b""
            if not data:
                del conns[s]; s.close(); continue
            with open(os.path.join(d, "recv.%d" % conns[s]), "a") as f:
                f.write(data.decode())
