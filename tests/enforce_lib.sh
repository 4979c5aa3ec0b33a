# shellcheck shell=bash
# Enforcement test helpers, sourced after lib.sh. Every namespace, veth and
# process here is the test's own and is removed at exit; nothing touches the
# root namespace's interfaces or sockets.
EPEER="$TOP/tests/enforce_peer.py"
PY=/usr/bin/python3	# Debian's, with scapy

# enf_pair C S: client and server namespaces joined by veth (vc in C, vs in
# S): C 10.77.0.1 fd77::1, S 10.77.0.2 fd77::2. Sets NS_<C>, NS_<S>.
enf_pair() {
	local c s
	c=$(new_netns "$1") && s=$(new_netns "$2") || return 1
	ip link add vc netns "$c" type veth peer name vs netns "$s" || return 1
	ip -n "$c" addr add 10.77.0.1/24 dev vc
	ip -n "$s" addr add 10.77.0.2/24 dev vs
	ip -n "$c" addr add fd77::1/64 dev vc nodad
	ip -n "$s" addr add fd77::2/64 dev vs nodad
	ip -n "$c" link set vc up && ip -n "$s" link set vs up || return 1
	eval "NS_$1=$c; NS_$2=$s"
	v6_settled "$c" && v6_settled "$s"
}

# v6_settled NS: waits until no IPv6 address in NS is tentative (DAD done);
# until then the first IPv6 exchange can go unanswered.
v6_settled() { wait_for 5 _no_tentative "$1"; }
_no_tentative() { [ -z "$(ip -n "$1" -6 addr show tentative)" ]; }

# mac_of NS IFACE
mac_of() { ip -n "$1" -br link show "$2" | awk '{print $3}'; }

# enf_listen NS PORT...: TCP and UDP servers (v4 and v6) in NS.
enf_listen() {
	local ns=$1 d
	shift
	d=$(mktemp -d "$T_DIR/listen.XXXX")
	ip netns exec "$ns" "$PY" "$EPEER" listen "$d" "$@" &
	wait_for 5 test -e "$d/ready"
}

# enf_policy FILE: makes FILE the policy in force (the agent's control socket).
enf_policy() { "$VIGIL" --pin-dir "$T_PIN" policy load "$1"; }

# capture NS IFACE FILE [FILTER]: tshark in the background until
# stop_capture; FILTER (a capture filter) defaults to TCP and ICMP.
capture() {
	ip netns exec "$1" tshark -q -n -i "$2" -w "$3" -f "${4:-tcp or icmp or icmp6}" 2>"$3.err" &
	CAPTURE_PID=$!
	on_exit "kill $CAPTURE_PID"
	wait_for $((5 * T_SLOW)) grep -q "Capturing on" "$3.err"
}
# Waits a little for tshark to write what it has; one that does not stop on
# SIGINT (still starting, under TCG) is killed.
stop_capture() {
	sleep 0.3
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait_for $((5 * T_SLOW)) sh -c "! kill -0 $CAPTURE_PID 2>/dev/null" || kill -KILL "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
}

# rsts PCAP [SPORT]: one line per RST seen (from SPORT): "port seq ack flags
# window", by destination port.
rsts() {
	tshark -n -r "$1" -Y "tcp.flags.reset == 1${2:+ && tcp.srcport == $2}" -T fields -e tcp.dstport -e tcp.seq_raw \
		-e tcp.ack_raw -e tcp.flags -e tcp.window_size_value 2>/dev/null | sort -n
}

# enf_router A R B: A -- R -- B, R routing between them (A 10.78.1.1
# fd78:1::1 on va, R ra/rb, B 10.78.2.1 fd78:2::1 on vb). Sets NS_<A> ...
enf_router() {
	local a r b
	a=$(new_netns "$1") && r=$(new_netns "$2") && b=$(new_netns "$3") || return 1
	ip link add va netns "$a" type veth peer name ra netns "$r" || return 1
	ip link add vb netns "$b" type veth peer name rb netns "$r" || return 1
	ip -n "$a" addr add 10.78.1.1/24 dev va && ip -n "$a" addr add fd78:1::1/64 dev va nodad
	ip -n "$r" addr add 10.78.1.254/24 dev ra && ip -n "$r" addr add fd78:1::254/64 dev ra nodad
	ip -n "$r" addr add 10.78.2.254/24 dev rb && ip -n "$r" addr add fd78:2::254/64 dev rb nodad
	ip -n "$b" addr add 10.78.2.1/24 dev vb && ip -n "$b" addr add fd78:2::1/64 dev vb nodad
	ip -n "$a" link set va up && ip -n "$b" link set vb up &&
		ip -n "$r" link set ra up && ip -n "$r" link set rb up || return 1
	ip -n "$a" route add default via 10.78.1.254 && ip -n "$a" -6 route add default via fd78:1::254
	ip -n "$b" route add default via 10.78.2.254 && ip -n "$b" -6 route add default via fd78:2::254
	ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	eval "NS_$1=$a; NS_$2=$r; NS_$3=$b"
	v6_settled "$a" && v6_settled "$r" && v6_settled "$b"
}

# enf_flow CNS SNS DIR PORT ADDR MODE [CPU]: a TCP connection from namespace
# CNS to ADDR:PORT in SNS, held by both ends (tests/enforce_peer.py: MODE
# busy sends 100 bytes every 20 ms from each end, bulk 32 KiB every 20 ms
# from the client, idle holds it silent); with CPU, the client runs on that
# CPU only. DIR/a/state and DIR/b/state say "up", then how each end ended
# ("ECONNRESET MS").
enf_flow() {
	local c=$1 s=$2 d=$3 port=$4 addr=$5 serve=serve1 hold=hold pin=()
	[ "$6" = busy ] && serve=serve1-busy hold=busy
	[ "$6" = bulk ] && serve=serve1-busy hold=bulk
	[ -n "${7:-}" ] && pin=(taskset -c "$7")
	mkdir -p "$d/a" "$d/b"
	# Each peer is a Python start: seconds under TCG (T_SLOW).
	ip netns exec "$s" "$PY" "$EPEER" "$serve" "$port" "$d/b" &
	wait_for $((5 * T_SLOW)) test -e "$d/b/listening" || return 1
	ip netns exec "$c" "${pin[@]}" "$PY" "$EPEER" "$hold" "$addr" "$port" "$d/a" &
	wait_for $((5 * T_SLOW)) test -e "$d/a/state" && wait_for $((5 * T_SLOW)) test -e "$d/b/state"
}
