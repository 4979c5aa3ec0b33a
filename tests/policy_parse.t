#!/usr/bin/env bash
# Policy files through `vigil policy check` (no agent needed): read whole or
# refused whole, with file:line:column and a message naming what is wrong;
# several files at once; limits on nesting and size; every example in
# docs/policy.md. Each spelling a rule could have, accepted as it reads or
# refused where it is, is a case of the C table in tests/unit_policy.c.
# docs/policy.md names every action of the catalogue
# (include/vigil/policy_actions.h) and which take a cgroup.
. "$(dirname "$0")/lib.sh"
plan 12

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
refused unknown 3:5 "unknown key 'colour' in a rule (known: name, action," "unknown key, at the key"

# Files are all-or-nothing together too: the second one's error stops both.
out=$("$VIGIL" policy check "$T_DIR/good.yaml" "$T_DIR/unknown.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"unknown.yaml:3:5: "* ]]; ok $? "several files: the bad one is named"
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

# The catalogue, "NAME CGROUP KINDS" a line (tests/policy_actions.c): the
# network rules' actions in the network example, the exec and file rules'
# in theirs.
"$TOP/$BUILD/tests/policy_actions" >"$T_DIR/all_actions"
grep ' net$' "$T_DIR/all_actions" >"$T_DIR/actions"
names=$(cut -d' ' -f1 "$T_DIR/actions" | paste -sd' ')
pnames=$(grep ' exec,file$' "$T_DIR/all_actions" | cut -d' ' -f1 | paste -sd' ')
pdoc=$(sed -nE 's/^ +action: .*# ([a-z |]*[a-z]) +\(exec and file rules\)$/\1/p' "$TOP/docs/policy.md" | tr -d ' ' | tr '|' ' ')
[ -n "$pnames" ] && [ "$pdoc" = "$pnames" ]
ok $? "docs/policy.md's exec and file example names their actions in order ($pnames)"
row=$(grep '^| `action` (exec, file) |' "$TOP/docs/policy.md")
missing=$(for a in $pnames; do [[ "$row" == *"\`$a\`:"* ]] || echo "$a"; done | paste -sd' ')
is "$missing" "" "docs/policy.md's exec and file key table says what each action does"
doc=$(sed -nE 's/^ +action: .*# ([a-z |]*[a-z]) +\(required\)$/\1/p' "$TOP/docs/policy.md" | tr -d ' ' | tr '|' ' ')
[ "$(wc -l <"$T_DIR/actions")" -ge 5 ] && [ "$doc" = "$names" ]
ok $? "docs/policy.md's example names the catalogue's actions in order ($names)"
[ "$doc" = "$names" ] || diag "docs: $doc"
row=$(grep '^| `action` |' "$TOP/docs/policy.md")
missing=$(for a in $names; do [[ "$row" == *"\`$a\`:"* ]] || echo "$a"; done | paste -sd' ')
is "$missing" "" "docs/policy.md's key table says what each action does"
row=$(grep '^| `cgroup` |' "$TOP/docs/policy.md")
takes=$(sed -nE 's/.*Only for ([^;]*);.*/\1/p' <<<"$row" | grep -oE '`[a-z]+`' | tr -d '`' | sort | paste -sd' ')
needs=$(grep -oE '`[a-z]+` requires it' <<<"$row" | grep -oE '^`[a-z]+`' | tr -d '`' | sort | paste -sd' ')
is "$takes / $needs" "$(awk '$2 != "no" { print $1 }' "$T_DIR/actions" | sort | paste -sd' ') / $(awk '$2 == "must" { print $1 }' "$T_DIR/actions" | sort | paste -sd' ')" \
	"docs/policy.md's 'cgroup' key names the actions that take one / need one"
done_testing
