#!/bin/sh
# upload_hook.t - the hook `shakedown run` calls after a run,
# sd_upload_after_run(), driven by test/upload_hook: the report reaches
# the collector; a failing or unreachable collector, or an unreadable token
# file, leaves it in the outbox with the warning the core prints; the URL
# may come from SHAKEDOWN_UPLOAD_URL; no URL means nothing to do; no
# database means a warning.  The token (from SHAKEDOWN_TOKEN here) shows
# nowhere.

. "${top_srcdir:-$(dirname "$0")/../..}/test/system/upload_lib.sh"
upload_setup
HOOK=${top_builddir:-$top_srcdir}/test/system/upload_hook
[ -x "$HOOK" ] || skip_all "test/upload_hook is not built"
export SHAKEDOWN_TOKEN=$TOKEN
export SHAKEDOWN_UPLOAD_ATTEMPTS=2

hook() {	# hook NAME ARGS...: sets RC (0), OUT, ERR
	name=$1
	shift
	"$HOOK" "$@" > "$tmp/out/$name.stdout" 2> "$tmp/out/$name.stderr"
	RC=$?
	OUT=$(cat "$tmp/out/$name.stdout")
	ERR=$(cat "$tmp/out/$name.stderr")
}

db=$tmp/a.db
make_db "$db"

# -- delivered ------------------------------------------------------------------
start_server ok 201
hook ok "$db" "$RUN" "http://127.0.0.1:$PORT/api/runs" - -
is "$OUT" "status 0" "delivered: SD_OK"
is "$ERR" "" "no warning"
is "$(requests "$LOG")" 1 "the collector got the report"
is "$(field "$LOG" 1 'r["headers"]["Idempotency-Key"]')" "$RUN" \
	"Idempotency-Key is the run's uuid"
is "$(python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])][0]
print(r["headers"].get("Authorization") == "Bearer " + sys.argv[2])' \
	"$LOG" "$TOKEN")" True "the token from SHAKEDOWN_TOKEN is the bearer token"
is "$(outbox "$db" "state, attempts, http_status")" "sent|1|201" "outbox: sent"
stop_server $SERVER_PID

# -- a failing collector: the warning the core prints -----------------------------
make_db "$db"
start_server fail 503
url=http://127.0.0.1:$PORT/api/runs
hook fail "$db" "$RUN" "$url" - -
is "$OUT" "status 8" "HTTP 503 twice: SD_ERR_IO"
is "$ERR" "shakedown: warning: upload to $url failed after 2 attempts (HTTP 503); the report is in the outbox: run 'shakedown upload --pending'" \
	"the warning says where the report is and what to run"
is "$(requests "$LOG")" 2 "two attempts"
is "$(sqlite3 "$db" "SELECT o.state || '|' || o.attempts || '|' || o.http_status FROM upload_outbox o JOIN runs r ON r.id = o.run_id WHERE r.uuid = '$RUN'")" \
	"pending|2|503" "outbox: pending, 2 attempts, HTTP 503"
stop_server $SERVER_PID
start_server fail 200 --port "$PORT"
run_sd fail_pending upload --pending --db "$db"
is "$RC" 0 "upload --pending delivers it later"
is "$(requests "$LOG")" 1 "once"
stop_server $SERVER_PID

# -- the URL from the environment; the collector is down ----------------------------
make_db "$db"
SHAKEDOWN_UPLOAD_URL=$url hook env "$db" "$RUN" - - -
is "$OUT" "status 8" "SHAKEDOWN_UPLOAD_URL, collector down: SD_ERR_IO"
case $ERR in *"upload to $url failed after 2 attempts ("*"the report is in the outbox"*)
		pass "the warning names the URL and the outbox";;
	*) fail "the warning names the URL and the outbox"; diag "$ERR";; esac

# -- an unreadable token file: queued anyway ------------------------------------------
make_db "$db"
hook notoken "$db" "$RUN" "$url" "$tmp/missing-token" -
is "$OUT" "status 8" "unreadable token file: SD_ERR_IO"
case $ERR in *"token file $tmp/missing-token"*"the report is in the outbox"*)
		pass "the warning names the token file and the outbox";;
	*) fail "the warning names the token file and the outbox"; diag "$ERR";; esac
is "$(sqlite3 "$db" "SELECT o.state FROM upload_outbox o JOIN runs r ON r.id = o.run_id WHERE r.uuid = '$RUN'")" \
	pending "the report waits in the outbox"

# -- nothing to do, nothing recorded ---------------------------------------------------
hook nourl "$db" "$RUN" - - -
is "$OUT" "status 0" "no URL anywhere: nothing to do"
hook nodb none "$RUN" "$url" - -
is "$OUT" "status 1" "--db none with a URL: SD_ERR_INVALID"
case $ERR in *"--db none"*) pass "the warning says why";;
	*) fail "the warning says why"; diag "$ERR";; esac

no_token_anywhere "$db"
done_testing
