#!/usr/bin/env bash
# Policy files are read whole or refused whole, with file:line:column and a
# message naming what is wrong (vigil policy check, no agent needed).
. "$(dirname "$0")/lib.sh"
plan 55

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
refused unknown 3:5 "unknown key in a rule (known: name, action," "unknown key, at the key"

pol badcidr 'rules:
  - action: drop
    cidr: [10.0.0.0/8, 300.1.1.1/8]' >/dev/null
refused badcidr 3:24 "bad CIDR: expected an IPv4 or IPv6 address" "bad CIDR, at the list item"

pol hostbits 'rules:
  - action: drop
    cidr:
      - 2001:db8::/32
      - 2001:db8::1/32' >/dev/null
refused hostbits 5:9 "bad CIDR: host bits set past /32" "CIDR with host bits set"

pol badprefix 'rules:
  - action: drop
    cidr: 10.0.0.0/33' >/dev/null
refused badprefix 3:11 "the prefix length must be 0-32" "prefix longer than the family allows"

pol badport 'rules:
  - action: drop
    port: 9000-80' >/dev/null
refused badport 3:11 "bad port range: the lower end is above the upper" "port range upside down"

pol badport2 'rules:
  - action: drop
    port: 70000' >/dev/null
refused badport2 3:11 "bad port: expected a number 1-65535" "port out of range"

pol badaction 'rules:
  - action: explode' >/dev/null
refused badaction 2:13 "unknown action (one of: allow, drop, reject, reset, deny)" "unknown action"

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
refused dupname 3:5 "this rule's name is used by an earlier rule" "duplicate rule names"

# Files are all-or-nothing together too: the second one's error stops both.
out=$("$VIGIL" policy check "$T_DIR/good.yaml" "$T_DIR/unknown.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"unknown.yaml:3:5: "* ]]; ok $? "several files: the bad one is named"
# Every spelling the format could allow either means what it reads as or is
# refused where it is: nothing is accepted and then enforces nothing.
# spell NAME WANT-POSITION-OR-"ok" WANT-TEXT RULE-YAML...
spell() {
	local name=$1 pos=$2 want=$3 out rc; shift 3
	printf '%s\n' "rules:" "$@" >"$T_DIR/$name.yaml"
	if [ "$pos" = ok ]; then
		out=$("$VIGIL" policy check "$T_DIR/$name.yaml" 2>&1); rc=$?
		ok $rc "accepted: $want"; [ $rc -eq 0 ] || diag "$out"
	else
		refused "$name" "$pos" "$want" "refused at $pos: $want"
	fi
}
spell cg_dot 3:16 "'.' and '..' path components are refused" "  - action: deny" "    cgroup: /a/./b"
spell cg_dotdot 3:15 "'.' and '..' path components are refused" "  - action: deny" "    cgroup: a/../b"
spell cg_dotend 3:15 "'.' and '..' path components are refused" "  - action: deny" "    cgroup: a/."
spell cg_dotonly 3:13 "'.' and '..' path components are refused" "  - action: deny" "    cgroup: ."
spell cg_empty 3:15 "an empty path component ('//')" "  - action: deny" "    cgroup: a//b"
spell cg_quoted 3:17 "'.' and '..' path components are refused" "  - action: deny" '    cgroup: "/a/./b"'
spell cg_ctl 3:15 "a control character in the path" "  - action: deny" '    cgroup: "a\tb"'
spell ns_ctl 3:12 "bad network namespace" "  - action: reset" '    netns: "a\x1bb"'
spell if_ctl 4:17 "bad interface name" "  - action: drop" "    netns: blue" '    interfaces: "e\x07th0"'
spell cg_trailing ok "a trailing / on a cgroup path (dropped)" "  - action: deny" "    cgroup: /a/b/"
spell cg_dots ok "a cgroup component that merely starts with a dot" "  - action: deny" "    cgroup: a/.hidden/..b"
spell mapped ok "an IPv4-mapped block (kept as IPv4)" "  - action: drop" '    cidr: "::ffff:10.99.0.0/120"'
spell mapped96 ok "the whole IPv4-mapped range (kept as 0.0.0.0/0)" "  - action: drop" '    cidr: "::ffff:0:0/96"'
spell mapped_wide ok "an IPv6 block wider than the mapped range (native IPv6 only)" "  - action: drop" '    cidr: "::/64"'
spell all4 ok "0.0.0.0/0" "  - action: drop" "    cidr: 0.0.0.0/0"
spell all6 ok "::/0" "  - action: drop" '    cidr: "::/0"'
spell hostbits4 3:11 "host bits set past /24" "  - action: drop" "    cidr: 10.0.0.1/24"
spell emptyprefix 3:11 "the prefix length must be 0-32" "  - action: drop" "    cidr: 10.0.0.0/"
spell zone 3:11 "expected an IPv4 or IPv6 address" "  - action: drop" '    cidr: "fe80::1%eth0"'
spell shortv4 3:11 "expected an IPv4 or IPv6 address" "  - action: drop" "    cidr: 10.1"
spell port0 3:11 "port 0 matches nothing" "  - action: drop" "    port: 0"
spell port0range 3:11 "port 0 matches nothing" "  - action: drop" "    port: 0-100"
spell portrange ok "a port range" "  - action: drop" "    port: 1-65535"
spell portopen 3:11 "the upper end is not a number" "  - action: drop" "    port: 8000-"
spell portspace 3:11 "expected a number 1-65535" "  - action: drop" '    port: "8000 - 8100"'
spell portsign 3:11 "expected a number 1-65535" "  - action: drop" "    port: +22"
spell portlist 3:11 "'port' takes a single value, not a list" "  - action: drop" "    port: [22, 80]"
spell upper_proto 3:15 "unknown protocol (one of: tcp, udp, any)" "  - action: drop" "    protocol: TCP"
spell upper_action 2:13 "unknown action" "  - action: DROP"
spell dupkey 3:5 "'action' given twice in one rule (first at line 2)" "  - action: allow" "    action: drop"
spell anchor 2:5 "YAML anchors and aliases are refused" "  - &r {action: drop}" "  - *r"
spell alias 2:35 "YAML anchors and aliases are refused" "  - {name: a, action: drop, cidr: &n 10.0.0.0/8}" "  - {name: b, action: drop, cidr: *n}"
spell merge 2:5 "YAML anchors and aliases are refused" "  - &b {action: drop}" "  - <<: *b"
spell tag 3:11 "YAML tags (such as !!str) are refused" "  - action: drop" "    port: !!str 22"
spell tag_custom 2:13 "YAML tags (such as !!str) are refused" "  - action: !allow drop"
spell twodocs 3:1 "a second YAML document" "  - action: drop" "---" "rules: []"
printf 'version: 1\nversion: 1\nrules:\n  - action: drop\n' >"$T_DIR/dupversion.yaml"
refused dupversion 2:1 "'version' given twice" "'version' twice"
printf 'rules:\n  - action: drop\nrules:\n  - action: allow\n' >"$T_DIR/duprules.yaml"
refused duprules 3:1 "'rules' given twice" "'rules' twice"
python3 -c "print('rules:\n' + '  - action: drop\n    cidr: ' + '[' * 40 + ']' * 40)" >"$T_DIR/deep.yaml"
refused deep 3:40 "nested deeper than 32 levels" "nesting past 32 levels"
python3 -c "print('rules: [' + '[],' * 70000 + ']')" >"$T_DIR/wide.yaml"
refused wide 1:196608 "more than 65536 values in one file" "more than 65536 values"
# Every example in docs/policy.md reads as documented.
awk -v d="$T_DIR" '/^```yaml/ { n++; f = d "/doc" n ".yaml"; next } /^```/ { f = "" } f { print > f }' "$TOP/docs/policy.md"
bad=0; n=0
for f in "$T_DIR"/doc*.yaml; do
	n=$((n + 1))
	"$VIGIL" policy check "$f" >/dev/null 2>"$T_DIR/doc.err" || { bad=1; diag "$(cat "$T_DIR/doc.err")"; }
done
[ $bad -eq 0 ] && [ $n -ge 4 ]; ok $? "the $n policy examples in docs/policy.md are valid"
done_testing
