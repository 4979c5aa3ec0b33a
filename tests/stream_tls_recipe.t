#!/usr/bin/env bash
# docs/stream.md's certificate recipe, run as it stands in a folder of its
# own, makes files that work: an agent streams to a collector over tls://
# with them, and the collector names the agent by its certificate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
command -v openssl >/dev/null || skip_all "openssl is not installed"
plan 4

awk '/<!-- recipe: certificates -->/ { on = 1; next } on && /^```sh/ { body = 1; next }
	body && /^```/ { exit } body { print }' "$TOP/docs/stream.md" >"$T_DIR/recipe.sh"
[ "$(grep -c '^openssl' "$T_DIR/recipe.sh")" -eq 5 ]
ok $? "docs/stream.md has the recipe ($(wc -l <"$T_DIR/recipe.sh") lines)"
mkdir "$T_DIR/pki"
(cd "$T_DIR/pki" && bash -e "$T_DIR/recipe.sh") >"$T_DIR/recipe.out" 2>&1
ok $? "the recipe runs as it stands" || sed 's/^/#   /' "$T_DIR/recipe.out"

K="$T_DIR/pki"
start_collector c "" --listen tls://127.0.0.1:0 --tls-cert "$K/collector.pem" \
	--tls-key "$K/collector.key" --tls-ca "$K/ca.pem" -o "$T_DIR/out.json" || exit 1
start_agent --no-procfs -o /dev/null --node-name node-a --send "tls://127.0.0.1:$COLL_PORT" \
	--tls-server-name collector.example --tls-cert "$K/node-a.pem" --tls-key "$K/node-a.key" \
	--tls-ca "$K/ca.pem" || exit 1
/bin/true vigil-recipe-marker
wait_for 20 grep -q '"vigil-recipe-marker"' "$T_DIR/out.json"
ok $? "an agent streams over tls:// with the recipe's files"
grep -q "node-a" "$T_DIR/c.err"
ok $? "the collector names it by its certificate (node-a)"
stop_agent
done_testing
