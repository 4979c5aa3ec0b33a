#!/usr/bin/env bash
# Policy files are read whole or refused whole, with file:line:column and a
# message naming what is wrong (vigil policy check, no agent needed).
. "$(dirname "$0")/lib.sh"
plan 15

pol() { printf '%s\n' "$2" > "$T_DIR/$1.yaml"; echo "$T_DIR/$1.yaml"; }
# refused FILE-NAME WANT-POSITION WANT-TEXT DESCRIPTION
refused() {
	local out rc
	out=$("$VIGIL" policy check "$T_DIR/$1.yaml" 2>&1); rc=$?
	case "$out" in
	"$T_DIR/$1.yaml:$2: "*"$3"*) [ $rc -ne 0 ]; ok $? "$4";;
	*) ok 1 "$4"; diag "rc $rc, got: $out";;
	esac
}

pol good 'version: 1
rules:
  - name: no-ssh-out
    action: reject
    direction: egress
    protocol: tcp
    cidr: [10.0.0.0/8, "2001:db8::/32"]
    port: 22
  - action: drop
    port: 8000-8100
  - action: deny
    cgroup: /vigil/app
    cidr: 192.0.2.1
  - action: reset
    protocol: udp
    netns: [blue, /proc/1/ns/net]
    interfaces: veth0' >/dev/null
out=$("$VIGIL" policy check "$T_DIR/good.yaml" 2>&1)
is "$out" "$T_DIR/good.yaml: 4 rules" "a good file is read whole"

pol badyaml 'rules:
  - action: drop
    cidr: [10.0.0.0/8' >/dev/null
refused badyaml 4:1 "bad YAML: did not find expected ',' or ']' while parsing a flow sequence (begun at line 3, column 11)" "bad YAML: where the parser stopped, and where the list began"

pol unknown 'rules:
  - action: drop
    colour: red' >/dev/null
refused unknown 3:5 "unknown key 'colour' in a rule" "unknown key, at the key"

pol badcidr 'rules:
  - action: drop
    cidr: [10.0.0.0/8, 300.1.1.1/8]' >/dev/null
refused badcidr 3:24 "bad CIDR '300.1.1.1/8': '300.1.1.1' is not an IPv4 or IPv6 address" "bad CIDR, at the list item"

pol hostbits 'rules:
  - action: drop
    cidr:
      - 2001:db8::/32
      - 2001:db8::1/32' >/dev/null
refused hostbits 5:9 "host bits set past /32 (did you mean 2001:db8::/32?)" "CIDR with host bits set"

pol badprefix 'rules:
  - action: drop
    cidr: 10.0.0.0/33' >/dev/null
refused badprefix 3:11 "the prefix length must be 0-32" "prefix longer than the family allows"

pol badport 'rules:
  - action: drop
    port: 9000-80' >/dev/null
refused badport 3:11 "bad port range '9000-80': 9000 is above 80" "port range upside down"

pol badport2 'rules:
  - action: drop
    port: 70000' >/dev/null
refused badport2 3:11 "bad port '70000'" "port out of range"

pol badaction 'rules:
  - action: explode' >/dev/null
refused badaction 2:13 "unknown action 'explode' (one of: allow, drop, reject, reset, deny)" "unknown action"

pol noaction 'rules:
  - cidr: 10.0.0.0/8' >/dev/null
refused noaction 2:5 "rule has no 'action'" "rule without an action"

pol denynocg 'rules:
  - action: deny' >/dev/null
refused denynocg 2:5 "action deny needs 'cgroup'" "deny without a cgroup"

pol ifnons 'rules:
  - action: drop
    interfaces: eth0' >/dev/null
refused ifnons 3:5 "'interfaces' needs 'netns'" "interfaces without the namespace they are in"

pol dupname 'rules:
  - {name: a, action: drop}
  - {name: a, action: allow}' >/dev/null
refused dupname 3:5 "rule name 'a' is used twice" "duplicate rule names"

# Files are all-or-nothing together too: the second one's error stops both.
out=$("$VIGIL" policy check "$T_DIR/good.yaml" "$T_DIR/unknown.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"unknown.yaml:3:5: "* ]]; ok $? "several files: the bad one is named"
# Every example in docs/policy.md reads as documented.
awk -v d="$T_DIR" '/^```yaml/ { n++; f = d "/doc" n ".yaml"; next } /^```/ { f = "" } f { print > f }' "$TOP/docs/policy.md"
bad=0; n=0
for f in "$T_DIR"/doc*.yaml; do
	n=$((n + 1))
	"$VIGIL" policy check "$f" >/dev/null 2>"$T_DIR/doc.err" || { bad=1; diag "$(cat "$T_DIR/doc.err")"; }
done
[ $bad -eq 0 ] && [ $n -ge 4 ]; ok $? "the $n policy examples in docs/policy.md are valid"
done_testing
