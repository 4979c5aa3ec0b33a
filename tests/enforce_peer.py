#!/usr/bin/python3
"""Peers for the enforcement tests, run inside the test's namespaces with
/usr/bin/python3 (it has scapy). Each command prints one result line.

  listen DIR PORT...          TCP (v4+v6) and UDP servers; DIR/ready when up
  connect ADDR PORT TIMEOUT   "refused MS" | "timeout" | "connected MS" | "ERRNAME MS"
  udp ADDR PORT TIMEOUT       connected UDP: "refused MS" | "timeout" | "answered"
  triggers IFACE DSTMAC SRC DST DPORT   the trigger packets, one per source port
  flood IFACE DSTMAC SRC DST DPORT N RATE   N SYNs, spoofed sources, at most RATE/s
  ack IFACE DSTMAC SRC DST SPORT DPORT [SEQ ACK]   one ACK in a flow, as its end sends it
  syn IFACE DSTMAC SRC DST SPORT DPORT   one SYN
  shapes IFACE DSTMAC SRC DST DPORT   SYNs in shapes a parser may not resolve,
                              one per source port (41001...); see shapes()
  vlan IFACE DSTMAC SRC DST DPORT     SYNs behind VLAN tags, one per source
                              port (42001...); see VLAN_SHAPES
  tagged IFACE DSTMAC SRC DST SPORT DPORT VID tcp|udp   one SYN or UDP
                              datagram behind one 802.1Q tag
  tunrelay IFNAME NETNS_PATH IFNAME2 DIR   relays packets between tun device
                              IFNAME here and IFNAME2 in the namespace at
                              NETNS_PATH (a point-to-point L3 link); DIR/ready
  tun IFNAME SRC DST DPORT tcp|udp    one SYN (or UDP datagram) written into
                              tun device IFNAME; prints what comes back from
                              DPORT within a second: TCP flags, "icmp-unreach"
  l4 IFACE DSTMAC SRC DST DPORT       UDP-Lite, SCTP and DCCP frames to DPORT,
                              one per source port (43001...); see L4_SHAPES
  hold ADDR PORT DIR          an established connection, kept idle; DIR/state
                              gets "up", then how it ended ("ECONNRESET MS")
  busy ADDR PORT DIR          the same, sending a little every 20 ms
  bulk ADDR PORT DIR          the same, sending 32 KiB every 20 ms (at most
                              1.6 MB/s: many segments back to back, for GRO)
  serve1 PORT DIR             accepts one connection and holds it (DIR/state)
  serve1-busy PORT DIR        the same, sending a little every 20 ms
"""
import errno
import os
import socket
import sys
import time


def ms_since(t0):
    return int((time.monotonic() - t0) * 1000)


def listen(d, ports):
    socks = []
    for p in ports:
        t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        t.bind(("::", p))
        t.listen(64)
        socks.append(t)
        u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        u.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        u.bind(("::", p))
        socks.append(u)
    open(os.path.join(d, "ready"), "w").close()
    import select
    conns = []
    while True:
        r, _, _ = select.select(socks + conns, [], [])
        for s in r:
            if s in conns:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    conns.remove(s)
                    s.close()
            elif s.type == socket.SOCK_STREAM:
                c, _ = s.accept()
                conns.append(c)
            else:
                data, peer = s.recvfrom(65536)
                s.sendto(data, peer)


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def connect(addr, port, timeout):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.settimeout(float(timeout))
    t0 = time.monotonic()
    try:
        s.connect((addr, int(port)))
        print("connected", ms_since(t0))
    except socket.timeout:
        print("timeout")
    except ConnectionRefusedError:
        print("refused", ms_since(t0))
    except OSError as e:
        print(errno.errorcode.get(e.errno, "error"), ms_since(t0))


def udp(addr, port, timeout):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    s.settimeout(float(timeout))
    s.connect((addr, int(port)))
    t0 = time.monotonic()
    try:
        s.send(b"ping")
        s.recv(100)
        print("answered")
    except ConnectionRefusedError:
        print("refused", ms_since(t0))
    except socket.timeout:
        print("timeout")


def l3(src, dst, **kw):
    from scapy.all import IP, IPv6
    return IPv6(src=src, dst=dst, **kw) if ":" in dst else IP(src=src, dst=dst, **kw)


def triggers(iface, dmac, src, dst, dport):
    """The trigger set: source port says which one it is (40001...)."""
    from scapy.all import Ether, TCP, Raw, Padding, IP, IPv6, IPv6ExtHdrFragment, sendp
    dport = int(dport)
    e = Ether(dst=dmac)
    pk = [
        e / l3(src, dst) / TCP(sport=40001, dport=dport, flags="S", seq=1000),
        e / l3(src, dst) / TCP(sport=40002, dport=dport, flags="PA", seq=2000, ack=3000) / Raw(b"x" * 10),
        e / l3(src, dst) / TCP(sport=40003, dport=dport, flags="FA", seq=4000, ack=5000),
        e / l3(src, dst) / TCP(sport=40004, dport=dport, flags="F", seq=6000),
        e / l3(src, dst) / TCP(sport=40005, dport=dport, flags="S", seq=7000) / Raw(b"y" * 5),
        e / l3(src, dst) / TCP(sport=40006, dport=dport, flags="A", seq=8000, ack=9000),
        # no reply due: RST, bad checksum, a non-first fragment
        e / l3(src, dst) / TCP(sport=40007, dport=dport, flags="R", seq=1),
        e / l3(src, dst) / TCP(sport=40008, dport=dport, flags="S", seq=1, chksum=0x1234),
    ]
    # frame 6 padded to 60 bytes, as a NIC pads a bare ACK (veth does not)
    if ":" not in dst:
        pk[5] = pk[5] / Padding(b"\0" * 6)
        pk.append(e / IP(src=src, dst=dst, flags=0, frag=8, proto=6) / Raw(b"z" * 24))
    else:
        pk.append(e / IPv6(src=src, dst=dst) / IPv6ExtHdrFragment(offset=8, m=0, nh=6) / Raw(b"z" * 24))
    for p in pk:
        sendp(p, iface=iface, verbose=False)
        time.sleep(0.02)
    print("sent", len(pk))


def flood(iface, dmac, src, dst, dport, n, rate):
    """N SYNs at a capped rate from spoofed source src; "A.B.C.0/24" picks a
    random source in that /24 for each."""
    from scapy.all import Ether, TCP, sendp
    import random
    n, rate = int(n), float(rate)
    frames = []
    for i in range(n):
        s = src if "/" not in src else "%s.%d" % (src.rsplit(".", 1)[0], random.randint(2, 250))
        frames.append(Ether(dst=dmac) / l3(s, dst) / TCP(sport=random.randint(1024, 65000),
                                                          dport=int(dport), flags="S", seq=i))
    t0 = time.monotonic()
    sendp(frames, iface=iface, verbose=False, inter=1.0 / rate)
    print("sent", n, "in", ms_since(t0), "ms")


# The shapes, by source port: what each SYN looks like on the wire.
SHAPES = {
    41001: "IPv4 first fragment with 8 bytes of TCP, then the rest (offset 8)",
    41002: "IPv6 first fragment with 8 bytes of TCP, then the rest",
    41003: "IPv6, 5 destination-options headers",
    41004: "IPv6, 12 destination-options headers",
    41005: "IPv6, 20 destination-options headers (past vigil's walk)",
    41006: "truncated TCP header: 12 bytes where the header needs 20",
    41007: "TCP data offset past the end of the segment",
}


def shapes(iface, dmac, src, dst, dport):
    """One SYN in each shape of SHAPES that fits the family of dst. The
    fragmented ones are whole once reassembled, so a host that lets them by
    answers SYN-ACK."""
    from scapy.all import (Ether, IP, IPv6, TCP, Raw, IPv6ExtHdrDestOpt,
                           IPv6ExtHdrFragment, sendp)
    dport = int(dport)
    e = Ether(dst=dmac)
    v6 = ":" in dst
    pk = []

    def syn(sport):
        return TCP(sport=sport, dport=dport, flags="S", seq=1000 + sport)

    if not v6:
        whole = bytes(IP(src=src, dst=dst) / syn(41001))[20:]   # TCP, checksum done
        pk.append(e / IP(src=src, dst=dst, id=41001, flags="MF", frag=0, proto=6) / Raw(whole[:8]))
        pk.append(e / IP(src=src, dst=dst, id=41001, flags=0, frag=1, proto=6) / Raw(whole[8:]))
        for sport, keep, doff in ((41006, 12, 5), (41007, 20, 15)):
            t = bytearray(bytes(IP(src=src, dst=dst) / syn(sport))[20:])
            t[12] = doff << 4
            pk.append(e / IP(src=src, dst=dst, proto=6) / Raw(bytes(t[:keep])))
    else:
        whole = bytes(IPv6(src=src, dst=dst) / syn(41002))[40:]
        pk.append(e / IPv6(src=src, dst=dst) / IPv6ExtHdrFragment(id=41002, m=1, offset=0, nh=6) / Raw(whole[:8]))
        pk.append(e / IPv6(src=src, dst=dst) / IPv6ExtHdrFragment(id=41002, m=0, offset=1, nh=6) / Raw(whole[8:]))
        for sport, n in ((41003, 5), (41004, 12), (41005, 20)):
            ext = IPv6ExtHdrDestOpt()
            for _ in range(n - 1):
                ext = ext / IPv6ExtHdrDestOpt()
            pk.append(e / IPv6(src=src, dst=dst) / ext / syn(sport))
        for sport, keep, doff in ((41006, 12, 5), (41007, 20, 15)):
            t = bytearray(bytes(IPv6(src=src, dst=dst) / syn(sport))[40:])
            t[12] = doff << 4
            pk.append(e / IPv6(src=src, dst=dst, nh=6) / Raw(bytes(t[:keep])))
    for p in pk:
        sendp(p, iface=iface, verbose=False)
        time.sleep(0.02)
    print("sent", len(pk))


# VLAN tag stacks, by source port: (TPID, VID) outermost first. The kernel
# strips a VID 0 tag (priority tag) wherever it finds no VLAN device for it,
# any number of times, and takes what is behind to IPv4 or IPv6.
VLAN_SHAPES = {
    42001: [(0x8100, 0)],
    42002: [(0x88a8, 0), (0x8100, 0)],          # QinQ
    42003: [(0x8100, 0), (0x8100, 0)],
    42004: [(0x8100, 0), (0x8100, 0), (0x8100, 0)],
    42005: [(0x8100, 0), (0x8100, 0), (0x8100, 0), (0x8100, 0)],
}


def tagged(dmac, tags, rest):
    """An Ethernet frame to dmac with tags (TPID, VID) before rest."""
    from scapy.all import Ether, Dot1Q, Dot1AD
    f = Ether(dst=dmac, type=tags[0][0]) if tags else Ether(dst=dmac)
    for i, (tpid, vid) in enumerate(tags):
        nxt = tags[i + 1][0] if i + 1 < len(tags) else None
        t = (Dot1AD if tpid == 0x88a8 else Dot1Q)(vlan=vid)
        if nxt:
            t.type = nxt
        f = f / t
    return f / rest


def vlan(iface, dmac, src, dst, dport):
    """One SYN behind each VLAN_SHAPES stack."""
    from scapy.all import sendp, TCP
    n = 0
    for sport, tags in VLAN_SHAPES.items():
        sendp(tagged(dmac, tags, l3(src, dst) / TCP(sport=sport, dport=int(dport), flags="S",
                                                     seq=1000 + sport)), iface=iface, verbose=False)
        n += 1
        time.sleep(0.02)
    print("sent", n)


def tagged1(iface, dmac, src, dst, sport, dport, vid, proto):
    from scapy.all import sendp, TCP, UDP, Raw
    l4 = (TCP(sport=int(sport), dport=int(dport), flags="S", seq=1000) if proto == "tcp"
          else UDP(sport=int(sport), dport=int(dport)) / Raw(b"ping"))
    sendp(tagged(dmac, [(0x8100, int(vid))], l3(src, dst) / l4), iface=iface, verbose=False)
    print("sent")


# Other protocols with ports at L4 offset 0 and 2, by source port: the
# protocol and its header (whole, so the receiving stack can answer).
L4_SHAPES = {
    43001: "UDP-Lite",
    43002: "SCTP INIT",
    43003: "DCCP Request",
    43004: "UDP-Lite, header cut to 3 bytes (truncated)",
}


def l4(iface, dmac, src, dst, dport):
    """One frame of each L4_SHAPES protocol to dport."""
    from scapy.all import Ether, Raw, sendp
    from scapy.layers.sctp import SCTP, SCTPChunkInit
    import struct
    dport = int(dport)
    pk = []
    # UDP-Lite: checksum coverage 8 (the header); the sum is left 0 here:
    # vigil reads the ports, the receiver's verdict does not matter.
    pk.append(l3(src, dst, proto=136) if ":" not in dst else l3(src, dst, nh=136))
    pk[-1] = pk[-1] / Raw(struct.pack("!HHHH", 43001, dport, 8, 0) + b"lite")
    pk.append(l3(src, dst) / SCTP(sport=43002, dport=dport) / SCTPChunkInit(init_tag=1))
    dccp = struct.pack("!HHBBHBBHI", 43003, dport, 5, 0, 0, 0x01 << 1 | 1, 0, 0, 1) + struct.pack("!I", 0)
    pk.append((l3(src, dst, proto=33) if ":" not in dst else l3(src, dst, nh=33)) / Raw(dccp))
    pk.append((l3(src, dst, proto=136) if ":" not in dst else l3(src, dst, nh=136)) /
              Raw(struct.pack("!HH", 43004, dport)[:3]))
    for p in pk:
        sendp(Ether(dst=dmac) / p, iface=iface, verbose=False)
        time.sleep(0.02)
    print("sent", len(pk))


def tun_open(ifname):
    """An fd on tun device IFNAME of the caller's namespace (TUN, NO_PI)."""
    import fcntl, struct
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", ifname.encode(), 0x0001 | 0x1000))  # TUNSETIFF
    return fd


def tunrelay(here, netns_path, there, d):
    """A point-to-point IP link made of two tun devices: HERE in this
    namespace, THERE in the one at NETNS_PATH; every packet one side's stack
    sends comes out of the other. For L3 devices on a kernel built without
    IP tunnels. DIR/ready once both ends are open; runs until killed."""
    import ctypes, select
    a = tun_open(here)
    libc = ctypes.CDLL(None, use_errno=True)
    with open(netns_path) as ns:
        if libc.setns(ns.fileno(), 0x40000000) != 0:  # CLONE_NEWNET
            sys.exit("setns: " + os.strerror(ctypes.get_errno()))
    b = tun_open(there)
    open(os.path.join(d, "ready"), "w").close()
    peer = {a: b, b: a}
    while True:
        for fd in select.select([a, b], [], [])[0]:
            os.write(peer[fd], os.read(fd, 65536))


def tun(ifname, src, dst, dport, proto):
    """A device without an Ethernet header: the frame is the IP packet."""
    import select
    from scapy.all import TCP, UDP, Raw, IP, IPv6
    fd = tun_open(ifname)
    sport = 45000 + int(dport) % 1000
    l4 = (TCP(sport=sport, dport=int(dport), flags="S", seq=1000) if proto == "tcp"
          else UDP(sport=sport, dport=int(dport)) / Raw(b"ping"))
    time.sleep(0.2)     # the device gets its carrier when opened: routes settle
    os.write(fd, bytes(l3(src, dst) / l4))
    seen, end = [], time.monotonic() + 1
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], max(0, end - time.monotonic()))
        if not r:
            break
        b = os.read(fd, 65536)
        p = IPv6(b) if b[0] >> 4 == 6 else IP(b)
        if TCP in p and p[TCP].sport == int(dport) and p[TCP].dport == sport:
            seen.append(str(p[TCP].flags))
        elif (p.haslayer("ICMP") and p["ICMP"].type == 3) or p.haslayer("ICMPv6DestUnreach"):
            seen.append("icmp-unreach")
    print(" ".join(seen) if seen else "none")


def serve1(port, d, busy):
    """Accepts one connection on PORT, then behaves as hold() on it."""
    t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    t.bind(("::", int(port)))
    t.listen(1)
    open(os.path.join(d, "listening"), "w").close()
    s, _ = t.accept()
    t.close()
    watch(s, d, busy)


def ack(iface, dmac, src, dst, sport, dport, seq=12345, ack=67890):
    """One ACK in an existing flow, as its end would retransmit it."""
    from scapy.all import Ether, TCP, sendp
    sendp(Ether(dst=dmac) / l3(src, dst) / TCP(sport=int(sport), dport=int(dport), flags="A",
                                               seq=int(seq), ack=int(ack)), iface=iface, verbose=False)
    print("sent")


def syn(iface, dmac, src, dst, sport, dport):
    """One SYN (seq 1000)."""
    from scapy.all import Ether, TCP, sendp
    sendp(Ether(dst=dmac) / l3(src, dst) / TCP(sport=int(sport), dport=int(dport), flags="S",
                                               seq=1000), iface=iface, verbose=False)
    print("sent")


def hold(addr, port, d, busy):
    """busy: bytes to send per 20 ms, 0 for none."""
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.connect((addr, int(port)))
    watch(s, d, busy)


# How often a busy end sends.
BUSY_PERIOD = 0.02


def watch(s, d, busy):
    """Holds s until it ends, sending busy bytes every BUSY_PERIOD. Paced by
    the clock, not by what the peer sends: two busy ends that each sent on
    every receive would ping-pong as fast as the CPU goes, and on a VM's
    one vCPU starve everything else (a peer starting took seconds)."""
    st = os.path.join(d, "state")
    with open(st + ".tmp", "w") as f:
        f.write("up\n")
    os.rename(st + ".tmp", st)
    next_send = time.monotonic()
    while True:
        try:
            now = time.monotonic()
            if busy and now >= next_send:
                s.send(b"b" * busy)
                next_send = now + BUSY_PERIOD
            s.settimeout(max(0.001, next_send - now) if busy else BUSY_PERIOD)
            data = s.recv(65536)
            if data == b"":
                res = "EOF"
                break
        except socket.timeout:
            continue
        except OSError as e:
            res = errno.errorcode.get(e.errno, "error")
            break
    with open(st + ".tmp", "w") as f:
        f.write("%s %d\n" % (res, int(time.time() * 1000)))
    os.rename(st + ".tmp", st)


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    sys.stdout.reconfigure(line_buffering=True)
    if cmd == "listen":
        listen(a[0], [int(p) for p in a[1:]])
    elif cmd == "connect":
        connect(*a)
    elif cmd == "udp":
        udp(*a)
    elif cmd == "triggers":
        triggers(*a)
    elif cmd == "flood":
        flood(*a)
    elif cmd == "shapes":
        shapes(*a)
    elif cmd == "vlan":
        vlan(*a)
    elif cmd == "tagged":
        tagged1(*a)
    elif cmd == "tun":
        tun(*a)
    elif cmd == "tunrelay":
        tunrelay(*a)
    elif cmd == "l4":
        l4(*a)
    elif cmd == "ack":
        ack(*a)
    elif cmd == "syn":
        syn(*a)
    elif cmd in ("hold", "busy", "bulk"):
        hold(a[0], a[1], a[2], {"hold": 0, "busy": 100, "bulk": 32768}[cmd])
    elif cmd in ("serve1", "serve1-busy"):
        serve1(a[0], a[1], 100 if cmd == "serve1-busy" else 0)
    else:
        sys.exit("unknown command " + cmd)


main()
