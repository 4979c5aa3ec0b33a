#!/usr/bin/env bash
# Secrets in process arguments are masked in BPF, before the ring: each
# shape once in one exec, masked, next to a control word in the same place
# that is kept; and no secret is anywhere downstream: the JSON file in
# vigil's and Tetragon's form, the collector's file, the spool, a `vigil
# drain` output and the ring's own bytes (drained from the pinned ring).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 23
RING=262144
BIN="$T_DIR/bin"
mkdir -p "$BIN"
cp /bin/true "$BIN/mysql"
cp /bin/true "$BIN/mysqlx"
cp /bin/true "$BIN/curl"
cp /bin/true "$BIN/redact-probe"
S="q$$z"	# no secret is a word of any other command the test runs
SECRETS=("${S}pw1" "${S}pw2" "${S}tk3" "${S}ak4" "${S}pw5" "${S}se6" "${S}tk7" "${S}url8" "${S}my9" "${S}cu10"
	"${S}e11" "${S}e12" "${S}e13" "${S}e14")
printf '%s\n' "${SECRETS[@]}" >"$T_DIR/secrets"	# grep -f: never on a command line
stars() { printf '%*s' "${#1}" '' | tr ' ' '*'; }

# One exec carries every shape; the control exec the same words one letter
# off, in the same places, and its values must be seen as they are.
secret_run() {
	local m=$1
	"$BIN/redact-probe" "MARK-$m" --password "${SECRETS[0]}" "--password=${SECRETS[1]}" \
		"--token=${SECRETS[2]}" --api-key "${SECRETS[3]}" "PASSWORD=${SECRETS[4]}" \
		"DB_SECRET=${SECRETS[5]}" "GH_TOKEN=${SECRETS[6]}" "https://user:${SECRETS[7]}@host/x"
	"$BIN/mysql" "MARK-$m" "-p${SECRETS[8]}"
	"$BIN/curl" "MARK-$m" -u "user:${SECRETS[9]}" http://127.0.0.1:1/
	"$BIN/redact-probe" "CTRL-$m" --passwort "c1$m" "--passwort=c2$m" "--tokens=c3$m" \
		--api-kez "c4$m" "PASSWORT=c5$m" "DB_SECRETS=c6$m" "GH_TOKENS=c7$m" "https://user@host/c8$m"
	"$BIN/mysqlx" "CTRL-$m" "-pc9$m"
	"$BIN/curl" "CTRL-$m" -o "user:c10$m" http://127.0.0.1:1/
}
# The secret as the last argument, at four lengths of argv: the last
# argument ends at argv's last byte (its NUL is not counted), where the
# pass must still close it.
PADS=("" a aa aaa)
tail_run() {
	for k in 0 1 2 3; do
		"$BIN/redact-probe" "END-$1${PADS[$k]}" --password "${SECRETS[$((10 + k))]}"
	done
}
tail_got() { for k in 0 1 2 3; do args_of "$1" "END-$2${PADS[$k]} "; done | tr '\n' '|'; }
tail_want() {
	for k in 0 1 2 3; do
		printf 'END-%s --password %s|' "$1${PADS[$k]}" "$(stars "${SECRETS[$((10 + k))]}")"
	done
}
WANT_PROBE="MARK-1 --password $(stars "${SECRETS[0]}") --password=$(stars "${SECRETS[1]}") --token=$(stars "${SECRETS[2]}") --api-key $(stars "${SECRETS[3]}") PASSWORD=$(stars "${SECRETS[4]}") DB_SECRET=$(stars "${SECRETS[5]}") GH_TOKEN=$(stars "${SECRETS[6]}") https://user:$(stars "${SECRETS[7]}")@host/x"
args_of() { jq -r --arg m "$2" 'select(.process_exec.process.arguments // "" | startswith($m)) | .process_exec.process.arguments' "$1"; }
flags_of() { jq -r --arg m "$2" 'select(.process_exec.process.arguments // "" | startswith($m)) | .process_exec.process.flags' "$1"; }
no_secret() { ! grep -a -q -F -f "$T_DIR/secrets" "$@"; }

# 1. The collector away: the agent writes its file and spools the backlog.
start_collector c "" --listen tcp://127.0.0.1:0 -o "$T_DIR/coll.json" || exit 1
PORT=$COLL_PORT
kill -9 $COLL_PID; wait $COLL_PID 2>/dev/null
rm -f "$T_DIR/coll.json" "$T_DIR/coll.json.state"
start_agent --ring-size $RING --send "tcp://127.0.0.1:$PORT" --spool-dir "$T_DIR/spool" \
	--no-procfs --poll-ms 10 -o "$T_DIR/vigil.json" || exit 1
secret_run 1
tail_run 1
TAG="rd$$"
for ((i = 1; i <= 1500; i += 25)); do run_markers "$TAG" $i $((i + 24)); sleep 0.01; done
wait_for 10 sh -c "grep -q '\"$TAG-1500\"' '$T_DIR/vigil.json'"
is "$(args_of "$T_DIR/vigil.json" MARK-1 | grep -c .)" 3 "the three secret execs are seen, once each"
is "$(args_of "$T_DIR/vigil.json" "MARK-1 --password")" "$WANT_PROBE" \
	"every shape masked once, in its place, its length kept"
is "$(tail_got "$T_DIR/vigil.json" 1)" "$(tail_want 1)" \
	"a secret as the last argument is masked, at four lengths of argv"
is "$(args_of "$T_DIR/vigil.json" "MARK-1 -p")" "MARK-1 -p$(stars "${SECRETS[8]}")" "mysql -pSECRET masked"
is "$(args_of "$T_DIR/vigil.json" "MARK-1 -u")" "MARK-1 -u user:$(stars "${SECRETS[9]}") http://127.0.0.1:1/" \
	"curl -u user:SECRET masked after the colon"
is "$(flags_of "$T_DIR/vigil.json" "MARK-1 --password")" "execve redacted" "the exec says it was redacted"
is "$(args_of "$T_DIR/vigil.json" CTRL-1 | tr '\n' '|')" \
	"CTRL-1 --passwort c11 --passwort=c21 --tokens=c31 --api-kez c41 PASSWORT=c51 DB_SECRETS=c61 GH_TOKENS=c71 https://user@host/c81|CTRL-1 -pc91|CTRL-1 -o user:c101 http://127.0.0.1:1/|" \
	"control words in the same places keep their values"
is "$(flags_of "$T_DIR/vigil.json" "CTRL-1 --passwort")" execve "the control exec is not marked redacted"
grep -a -q "MARK-1" "$T_DIR"/spool/*.spool
ok $? "the backlog went to the spool, the secret exec with it"
check "no secret in the spool" -- no_secret "$T_DIR"/spool/*.spool
check "no secret in vigil's JSON file" -- no_secret "$T_DIR/vigil.json"

# 2. The collector back: it gets everything, masked.
start_collector c "" --listen "tcp://127.0.0.1:$PORT" -o "$T_DIR/coll.json" || exit 1
wait_for 30 sh -c "grep -q '\"$TAG-1500\"' '$T_DIR/coll.json'"
is "$(args_of "$T_DIR/coll.json" "MARK-1 --password")" "$WANT_PROBE" "the collector has the masked exec"
check "no secret in the collector's file" -- no_secret "$T_DIR/coll.json"
stop_agent

# 3. Agent stopped: the records wait in the pinned ring; its raw bytes,
# then a JSON drain in Tetragon's form.
secret_run 2
"$VIGIL" --pin-dir "$T_PIN" drain -o "$T_DIR/ring.stream" >/dev/null 2>&1
grep -a -q "MARK-2" "$T_DIR/ring.stream"
ok $? "the ring's bytes hold the secret exec"
check "no secret in the ring's bytes" -- no_secret "$T_DIR/ring.stream"
secret_run 3
"$VIGIL" --pin-dir "$T_PIN" drain --export-format tetragon -o "$T_DIR/drain.json" >/dev/null 2>&1
is "$(jq -r 'select(.process_exec.process.arguments // "" | startswith("MARK-3 --pass")) | .process_exec.process.arguments' "$T_DIR/drain.json")" \
	"${WANT_PROBE//MARK-1/MARK-3}" "vigil drain in Tetragon's form has the masked exec"
check "no secret in vigil drain's output" -- no_secret "$T_DIR/drain.json"

# 4. vigild in Tetragon's form.
start_agent --no-procfs --poll-ms 10 --export-format tetragon -o "$T_DIR/tetragon.json" || exit 1
secret_run 4
wait_for 10 sh -c "grep -q 'CTRL-4 -o' '$T_DIR/tetragon.json'"
check "Tetragon's form: no secret, the marks seen" -- sh -c "grep -q 'MARK-4 --password' '$T_DIR/tetragon.json' && ! grep -a -q -F -f '$T_DIR/secrets' '$T_DIR/tetragon.json'"
stop_agent

# 5. A policy's `redact:` section, swapped whole with the rules.
cat >"$T_DIR/custom.yaml" <<'POL'
rules: []
redact:
  defaults: false
  urls: false
  words: [Vt-Pin]
  suffixes: [_vtcode]
POL
printf 'rules: []\nredact:\n  enabled: false\n' >"$T_DIR/off.yaml"
printf 'rules: []\nredact:\n  words: ["a b"]\n' >"$T_DIR/bad.yaml"
chmod 600 "$T_DIR"/*.yaml
"$VIGIL" policy check "$T_DIR/bad.yaml" >"$T_DIR/check.out" 2>&1
[ $? -ne 0 ] && grep -q "bad.yaml:3:.*letters, digits" "$T_DIR/check.out"
ok $? "a bad secret word is refused with its place ($(head -1 "$T_DIR/check.out"))"
start_agent --no-procfs --poll-ms 10 -o "$T_DIR/policy.json" --policy "$T_DIR/custom.yaml" || exit 1
"$BIN/redact-probe" "MARK-5" --vt-pin "${SECRETS[0]}" "MY_VTCODE=${SECRETS[1]}" \
	--password "c5pw" "https://user:c5url@host/"
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/off.yaml" >/dev/null 2>&1
"$BIN/redact-probe" "MARK-6" --password "c6pw"
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/bad.yaml" >/dev/null 2>&1
"$BIN/redact-probe" "MARK-7" --password "c7pw"
wait_for 10 sh -c "grep -q 'MARK-7' '$T_DIR/policy.json'"
is "$(args_of "$T_DIR/policy.json" MARK-5)" \
	"MARK-5 --vt-pin $(stars "${SECRETS[0]}") MY_VTCODE=$(stars "${SECRETS[1]}") --password c5pw https://user:c5url@host/" \
	"the policy's words and suffixes are masked; without the defaults and URLs, those are kept"
is "$(args_of "$T_DIR/policy.json" MARK-6)" "MARK-6 --password c6pw" "enabled: false masks nothing"
is "$(args_of "$T_DIR/policy.json" MARK-7)" "MARK-7 --password c7pw" "a refused policy leaves the one in force"
check "no secret in the policy run's file" -- no_secret "$T_DIR/policy.json"
done_testing
