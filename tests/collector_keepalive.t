#!/usr/bin/env bash
# A peer that vanishes without a FIN or RST (its link taken down) must not
# hold its slot forever: accepted sockets have TCP keepalive and
# TCP_USER_TIMEOUT (--peer-timeout), so the collector sees ETIMEDOUT and
# closes the connection within about the peer timeout. A quiet peer whose
# link is up answers the probes and stays.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
LIMITS="$TOP/tests/collector_limits.py"
plan 4
TIMEOUT=4

stream_netns a && NA=$STREAM_NS && stream_netns b && NB=$STREAM_NS || exit 1
VA="v5a$$"; VB="v5b$$"
ip link add "$VA" netns "$NA" type veth peer name "$VB" netns "$NB"
ip -n "$NA" addr add 10.45.0.1/24 dev "$VA"; ip -n "$NA" link set "$VA" up
ip -n "$NB" addr add 10.45.0.2/24 dev "$VB"; ip -n "$NB" link set "$VB" up
start_collector c "$NA" --listen tcp://10.45.0.1:0 -o "$T_DIR/out.json" \
	--peer-timeout $TIMEOUT || exit 1

# A peer in b: a hello, then nothing, for a minute.
ip netns exec "$NB" $H "$LIMITS" 10.45.0.1 "$COLL_PORT" idle 1 60 >"$T_DIR/peer.out" &
wait_for 10 grep -q 'connected from 10.45.0.2' "$T_DIR/c.err"
ok $? "the peer in the other namespace connects"

# Link up: keepalive probes are answered, the quiet connection stays.
sleep $((2 * TIMEOUT))
! grep -q 'closing 10.45.0.2' "$T_DIR/c.err"
ok $? "a quiet peer that answers probes keeps its connection ($((2 * TIMEOUT)) s)"

# Link down: nothing answers any more.
ip -n "$NB" link set "$VB" down
T0=$SECONDS
wait_for $((TIMEOUT + 4)) grep -q 'closing 10.45.0.2:[0-9]*.*: Connection timed out' "$T_DIR/c.err"
ok $? "a vanished peer's connection is closed as timed out"
diag "closed $((SECONDS - T0)) s after its link went down (--peer-timeout $TIMEOUT)"
[ $((SECONDS - T0)) -le $((TIMEOUT + 2)) ]
ok $? "within the peer timeout (and a second or two of timer slack)"
done_testing
