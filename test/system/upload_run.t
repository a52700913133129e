#!/bin/sh
# upload_run.t - `shakedown run --upload URL`: the report of the run just
# recorded reaches the collector; a collector that fails or is down leaves
# it in the outbox with a warning, and never changes the run's exit status;
# SHAKEDOWN_UPLOAD_URL works like --upload; the token (here from
# SHAKEDOWN_TOKEN) is recorded nowhere and printed nowhere.

. "${top_srcdir:-$(dirname "$0")/../..}/test/system/upload_lib.sh"
upload_setup
can_run || skip_all "shakedown run --local does not work here (no backend built)"
export SHAKEDOWN_TOKEN=$TOKEN
export SHAKEDOWN_UPLOAD_ATTEMPTS=2

run_local() {	# run_local NAME DB ARGS...
	name=$1 db=$2
	shift 2
	run_sd "$name" run --local 2 --op all_reduce -b 1K -e 4K --db "$db" "$@"
	RUN=$(sqlite3 "$db" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1" \
		2>/dev/null)
}

# -- delivered --------------------------------------------------------------
start_server ok 201
run_local ok "$tmp/a.db" --upload "http://127.0.0.1:$PORT/api/runs"
is "$RC" 0 "run --upload: the run passes"
is "$(requests "$LOG")" 1 "the collector got one report"
is "$(field "$LOG" 1 'r["headers"]["Idempotency-Key"]')" "$RUN" \
	"Idempotency-Key is the recorded run's uuid"
is "$(python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])][0]
print(r["headers"].get("Authorization") == "Bearer " + sys.argv[2])' \
	"$LOG" "$TOKEN")" \
	True "the token from SHAKEDOWN_TOKEN is sent as a bearer token"
is "$(outbox "$tmp/a.db" "state, attempts, http_status")" "sent|1|201" \
	"outbox: sent"
case $ERR in *warning*upload*) fail "no upload warning"; diag "$ERR";;
	*) pass "no upload warning";; esac

# -- the collector fails: the run's status stands, the report waits -------------
stop_server $SERVER_PID
start_server fail 503
run_local fail "$tmp/a.db" --upload "http://127.0.0.1:$PORT/api/runs"
is "$RC" 0 "a failing collector does not change the run's exit status"
is "$(requests "$LOG")" 2 "two attempts (SHAKEDOWN_UPLOAD_ATTEMPTS=2)"
case $ERR in *"warning: upload to http://127.0.0.1:$PORT/api/runs failed after 2 attempts (HTTP 503); the report is in the outbox: run 'shakedown upload --pending'"*)
		pass "a warning says the report is in the outbox";;
	*) fail "a warning says the report is in the outbox"; diag "$ERR";; esac
is "$(sqlite3 "$tmp/a.db" "SELECT o.state || '|' || o.http_status FROM upload_outbox o JOIN runs r ON r.id = o.run_id WHERE r.uuid = '$RUN'")" \
	"pending|503" "outbox: pending, HTTP 503"
stop_server $SERVER_PID
start_server fail 200 --port "$PORT"
run_sd fail_pending upload --pending --db "$tmp/a.db"
is "$RC" 0 "--pending delivers it later"
is "$(requests "$LOG")" 1 "once"

# -- the collector is down; the URL from the environment -------------------------
stop_server $SERVER_PID
SHAKEDOWN_UPLOAD_URL=http://127.0.0.1:$PORT/ run_local down "$tmp/b.db"
is "$RC" 0 "collector down: the run still passes"
case $ERR in *"warning: upload to http://127.0.0.1:$PORT/ failed"*"--pending"*)
		pass "SHAKEDOWN_UPLOAD_URL is used; the warning names the outbox";;
	*) fail "SHAKEDOWN_UPLOAD_URL is used; the warning names the outbox"; diag "$ERR";; esac
is "$(outbox "$tmp/b.db" "state")" pending "outbox: pending"

# -- a token file that cannot be read: queued, with a warning -------------------
run_local notoken "$tmp/b.db" --upload "http://127.0.0.1:$PORT/" \
	--token-file "$tmp/missing-token"
is "$RC" 0 "an unreadable token file does not change the run's status"
case $ERR in *"token file $tmp/missing-token"*"outbox"*)
		pass "the warning names the token file";;
	*) fail "the warning names the token file"; diag "$ERR";; esac

# -- no database, nothing to send ------------------------------------------------
run_sd nodb run --local 2 --op all_reduce -b 1K -e 4K --db none \
	--upload "http://127.0.0.1:$PORT/"
is "$RC" 0 "--db none --upload: the run passes"
case $ERR in *warning*"--db none"*) pass "and a warning says why nothing was sent";;
	*) fail "and a warning says why nothing was sent"; diag "$ERR";; esac

no_token_anywhere "$tmp/a.db" "$tmp/b.db"
done_testing
