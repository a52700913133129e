# upload_lib.sh - shared by the upload tests (test/system/upload_*.t): the
# scripted collector (test/system/http_server.py) started and stopped by PID,
# a results database with runs in it, and a log of every command's output
# so a test can prove the token never shows.  TAP comes from lib.sh.
#
# Source it, then call upload_setup.  Needs $SHAKEDOWN and $top_srcdir.

. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

SERVER_PIDS=""
upload_cleanup() {	# the servers still running; lib.sh removes $TMPD
	for p in $SERVER_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	SERVER_PIDS=""
}

upload_setup() {
	command -v python3 >/dev/null || skip_all "python3 not found"
	command -v sqlite3 >/dev/null || skip_all "sqlite3 not found"
	"$SHAKEDOWN" help upload >/dev/null 2>&1 ||
		skip_all "shakedown has no upload command"
	NOCURL=0
	"$SHAKEDOWN" upload --pending --db /nonexistent/x.db 2>&1 |
		grep -q "built without libcurl" && NOCURL=1
	[ $NOCURL = 1 ] && [ "${UPLOAD_WITHOUT_CURL_OK:-0}" = 0 ] &&
		skip_all "shakedown was built without libcurl"
	# $tmp/out keeps every command's output (see no_token_anywhere)
	tmp=$TMPD/upload
	mkdir -p "$tmp/out"
	at_exit upload_cleanup
	# the collector is on 127.0.0.1: no proxy may stand in between
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy \
		ALL_PROXY no_proxy NO_PROXY
	unset SHAKEDOWN_UPLOAD_URL SHAKEDOWN_TOKEN SHAKEDOWN_TOKEN_FILE \
		SHAKEDOWN_CACERT SHAKEDOWN_DB
	# small numbers keep the retries quick
	export SHAKEDOWN_UPLOAD_BACKOFF=0.1 SHAKEDOWN_UPLOAD_BACKOFF_MAX=2
	export SHAKEDOWN_UPLOAD_CONNECT_TIMEOUT=2 SHAKEDOWN_UPLOAD_TIMEOUT=5
	export SHAKEDOWN_UPLOAD_ATTEMPTS=3
	TOKEN="TOKEN-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
	printf '%s\n' "$TOKEN" > "$tmp/token"
	chmod 600 "$tmp/token"
}

# start_server NAME SCRIPT [--port N] [--tls CERT KEY]: sets PORT, LOG
start_server() {
	name=$1 script=$2
	shift 2
	rm -f "$tmp/$name.port"
	LOG=$tmp/$name.log
	python3 "$top_srcdir/test/system/http_server.py" --port-file "$tmp/$name.port" \
		--log "$LOG" --script "$script" "$@" \
		> "$tmp/out/server-$name.txt" 2>&1 &
	SERVER_PID=$!
	SERVER_PIDS="$SERVER_PIDS $SERVER_PID"
	i=0
	while [ ! -s "$tmp/$name.port" ] && [ $i -lt 100 ]; do
		kill -0 $SERVER_PID 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	PORT=$(cat "$tmp/$name.port" 2>/dev/null)
	[ -n "$PORT" ] || { diag_file "$tmp/out/server-$name.txt"; \
		bail_out "test server did not start"; }
	: > "$LOG"
}

stop_server() {	# stop_server PID
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# requests LOG: how many requests the server received
requests() { if [ -f "$1" ]; then wc -l < "$1" | tr -d ' '; else echo 0; fi; }

# field LOG N EXPR: a Python expression over request N (1-based) as r
field() {
	python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2]) - 1]
print(eval(sys.argv[3]))' "$1" "$2" "$3"
}

# run_sd NAME ARGS...: run shakedown, keep stdout/stderr in $tmp/out,
# set RC, OUT (stdout) and ERR (stderr)
run_sd() {
	name=$1
	shift
	"$SHAKEDOWN" "$@" > "$tmp/out/$name.stdout" 2> "$tmp/out/$name.stderr"
	RC=$?
	OUT=$(cat "$tmp/out/$name.stdout")
	ERR=$(cat "$tmp/out/$name.stderr")
}

# can_run: 0 when `shakedown run --local` works here (a backend is built)
can_run() {
	[ -z "${SD_UPLOAD_TEST_MKDB:-}" ] &&
	"$SHAKEDOWN" run --local 2 --op all_reduce -b 1K -e 1K --db none \
		> /dev/null 2>&1
}

# make_db PATH: a results database with one more recorded run; sets RUN
# (its uuid).  The run is recorded by `shakedown run`; where no backend
# is built, the database is made from sql/schema.sql with a bare run row
# (the upload tests are about the upload, not about running).
make_db() {
	if [ -n "${SD_UPLOAD_TEST_MKDB:-}" ]; then
		# development without the core: a command that records a run
		$SD_UPLOAD_TEST_MKDB "$1"
	elif [ "${CAN_RUN:-}" = 1 ] || { [ -z "${CAN_RUN:-}" ] && can_run; }; then
		CAN_RUN=1
		"$SHAKEDOWN" run --local 2 --op all_reduce -b 1K -e 4K \
			--db "$1" > "$tmp/out/make_db.stdout" \
			2> "$tmp/out/make_db.stderr" ||
			{ diag_file "$tmp/out/make_db.stderr"; \
			  bail_out "shakedown run failed"; }
	else
		CAN_RUN=0
		[ -f "$1" ] || sqlite3 "$1" < "$top_srcdir/sql/schema.sql" ||
			bail_out "cannot create $1"
		u=$(python3 -c 'import uuid; print(uuid.uuid4())')
		sqlite3 "$1" "INSERT INTO runs (uuid, started_at, status,
			exit_status) VALUES ('$u',
			strftime('%Y-%m-%dT%H:%M:%fZ'), 'passed', 0)"
	fi
	RUN=$(sqlite3 "$1" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
}

# outbox DB COLUMNS: the outbox rows, one per line, '|' separated
outbox() { sqlite3 "$1" "SELECT $2 FROM upload_outbox ORDER BY id"; }

# no_token_anywhere DB...: the token in no output, no database
no_token_anywhere() {
	n=$(cat "$tmp"/out/* | grep -c -- "$TOKEN")
	is "$n" 0 "the token appears in no command's output"
	for db in "$@"; do
		n=$(sqlite3 "$db" .dump | grep -c -- "$TOKEN")
		is "$n" 0 "the token is not stored in $(basename "$db")"
	done
}
