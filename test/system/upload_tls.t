#!/bin/sh
# upload_tls.t - `shakedown upload` over HTTPS to a collector on 127.0.0.1
# whose certificate the test makes (a private CA with `openssl req -x509`,
# a server certificate for IP 127.0.0.1): accepted with --cacert or
# SHAKEDOWN_CACERT, refused with a clear error without it, with another CA
# or for another address, and no option turns verification off.

. "${top_srcdir:-$(dirname "$0")/../..}/test/system/upload_lib.sh"
upload_setup
command -v openssl >/dev/null || skip_all "openssl not found"

# -- certificates ------------------------------------------------------------
pki=$tmp/pki
mkdir -p "$pki"
mkca() {	# mkca NAME
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-nodes -keyout "$pki/$1.key" -out "$pki/$1.pem" -days 2 \
		-subj "/CN=shakedown test $1" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>>"$pki/log"
}
mkcert() {	# mkcert NAME CA IP
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "/CN=$3" \
		2>>"$pki/log" &&
	printf 'subjectAltName=IP:%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
		"$3" > "$pki/$1.ext" &&
	openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$2.pem" \
		-CAkey "$pki/$2.key" -CAcreateserial -out "$pki/$1.pem" \
		-days 2 -extfile "$pki/$1.ext" 2>>"$pki/log"
}
mkca ca && mkca otherca && mkcert server ca 127.0.0.1 &&
	mkcert elsewhere ca 127.0.0.2 ||
	{ diag_file "$pki/log"; \
	  bail_out "openssl could not make the certificates"; }

db=$tmp/r.db
make_db "$db"
RUN_A=$RUN
export SHAKEDOWN_TOKEN_FILE=$tmp/token

# -- the private CA given: accepted -------------------------------------------
start_server tls 201 --tls "$pki/server.pem" "$pki/server.key"
url=https://127.0.0.1:$PORT/api/runs
run_sd tls_ok upload "$RUN" --url "$url" --db "$db" --cacert "$pki/ca.pem"
is "$RC" 0 "https with --cacert CA: sent"
is "$(requests "$LOG")" 1 "the server got the report"
is "$(field "$LOG" 1 'r["headers"]["Idempotency-Key"]')" "$RUN" \
	"with the Idempotency-Key"

# -- no CA given: the system store does not know it -----------------------------
make_db "$tmp/b.db"
run_sd tls_nocacert upload "$RUN" --url "$url" --db "$tmp/b.db"
is "$RC" 3 "without --cacert: refused (exit 3)"
case $ERR in *"certificate"*"--cacert"*) pass "the error names the certificate and --cacert";;
	*) fail "the error names the certificate and --cacert"; diag "$ERR";; esac
is "$(requests "$LOG")" 1 "nothing reached the server"
is "$(outbox "$tmp/b.db" "state, attempts")" "pending|1" \
	"a certificate error is not retried; the report waits in the outbox"

# -- another CA: refused ------------------------------------------------------
run_sd tls_otherca upload "$RUN" --url "$url" --db "$tmp/b.db" \
	--cacert "$pki/otherca.pem"
is "$RC" 3 "with the wrong CA: refused (exit 3)"
case $ERR in *"certificate not accepted"*) pass "says the certificate was not accepted";;
	*) fail "says the certificate was not accepted"; diag "$ERR";; esac

# -- SHAKEDOWN_CACERT, and --pending delivers what waited -----------------------
SHAKEDOWN_CACERT=$pki/ca.pem run_sd tls_pending upload --pending --db "$tmp/b.db"
is "$RC" 0 "SHAKEDOWN_CACERT: --pending delivers"
is "$(requests "$LOG")" 2 "the report arrived once"
stop_server $SERVER_PID

# -- a certificate for another address: refused ----------------------------------
start_server tls2 201 --tls "$pki/elsewhere.pem" "$pki/elsewhere.key"
make_db "$tmp/c.db"
run_sd tls_name upload "$RUN" --url "https://127.0.0.1:$PORT/" \
	--db "$tmp/c.db" --cacert "$pki/ca.pem"
is "$RC" 3 "a certificate for 127.0.0.2 at 127.0.0.1: refused"
is "$(requests "$LOG")" 0 "nothing reached the server"
stop_server $SERVER_PID

# -- no way to switch verification off -----------------------------------------
for opt in --insecure -k --no-verify; do
	run_sd "tls_opt$opt" upload "$RUN_A" --url "$url" --db "$db" $opt
	is "$RC" 2 "$opt is not an option"
done
run_sd tls_badca upload "$RUN_A" --url "$url" --db "$db" \
	--cacert "$tmp/missing.pem"
is "$RC" 3 "a CA file that does not exist: exit 3"
case $ERR in *"CA file $tmp/missing.pem"*) pass "and the error names the file";;
	*) fail "and the error names the file"; diag "$ERR";; esac

no_token_anywhere "$db" "$tmp/b.db" "$tmp/c.db"
done_testing
