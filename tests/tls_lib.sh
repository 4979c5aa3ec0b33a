# Certificates for tests, made with the openssl CLI in the test's own
# folder (never committed keys): EC prime256v1, valid two days. Source it
# after lib.sh; files go to $P (default $T_DIR/pki).
#   ca NAME               a CA: $P/NAME.pem, $P/NAME.key
#   cert CA NAME CN SAN [DAYS [EXT]]
#                         a certificate CA signs, subject CN, subjectAltName
#                         SAN (e.g. 'DNS:node-a' or 'IP:127.0.0.1,DNS:x';
#                         empty: none), valid DAYS (default 2; 0: it expires
#                         within the second), EXT another extension line
#                         ('extendedKeyUsage=serverAuth'): $P/NAME.pem, $P/NAME.key
# Skips the whole test where there is no openssl CLI; TLS_CLIENT is the
# test TLS client (tests/tls_client.py).
command -v openssl >/dev/null || skip_all "openssl is not installed"
TLS_CLIENT="$TOP/tests/tls_client.py"
P=${P:-$T_DIR/pki}
mkdir -p "$P"

ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=$1" -keyout "$P/$1.key" -out "$P/$1.pem" 2>/dev/null
}
cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$3" \
		-keyout "$P/$2.key" -out "$P/$2.csr" 2>/dev/null &&
	openssl x509 -req -in "$P/$2.csr" -CA "$P/$1.pem" -CAkey "$P/$1.key" -CAcreateserial \
		-days "${5:-2}" -extfile <(if [ -n "$4" ]; then printf 'subjectAltName=%s\n' "$4"; fi; [ -z "${6:-}" ] || echo "$6") \
		-out "$P/$2.pem" 2>/dev/null
}
