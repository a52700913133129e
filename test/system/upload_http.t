#!/bin/sh
# upload_http.t - `shakedown upload` against a real HTTP collector on
# 127.0.0.1 (test/system/http_server.py): what is sent, retries and backoff,
# answers that are not retried, timeouts, the outbox (--pending delivers
# each report once, --list says why), and the token kept out of every
# output, the database and the process arguments.

. "${top_srcdir:-$(dirname "$0")/../..}/test/system/upload_lib.sh"
upload_setup

db=$tmp/r.db
make_db "$db"
[ -n "$RUN" ] || bail_out "no run in the database"
RUN_A=$RUN
export SHAKEDOWN_TOKEN_FILE=$tmp/token

# -- success: the request carries what the contract says -----------------
start_server ok 201
run_sd ok upload "$RUN" --url "http://127.0.0.1:$PORT/api/runs" --db "$db"
is "$RC" 0 "upload to a server that answers 201 exits 0"
is "$(requests "$LOG")" 1 "one request"
is "$(field "$LOG" 1 'r["path"]')" /api/runs "POSTed to the URL's path"
is "$(field "$LOG" 1 'r["method"]')" POST "method POST"
is "$(field "$LOG" 1 'r["headers"]["Content-Type"]')" application/json \
	"Content-Type: application/json"
is "$(field "$LOG" 1 'r["headers"]["Idempotency-Key"]')" "$RUN" \
	"Idempotency-Key is the run uuid"
is "$(field "$LOG" 1 'r["headers"]["Authorization"] == "Bearer " + open(sys.argv[1].rsplit("/", 1)[0] + "/token").read().strip()')" \
	True "Authorization: Bearer with the token from the file"
is "$(field "$LOG" 1 'isinstance(json.loads(r["body"]), dict) and "'"$RUN"'" in r["body"]')" \
	True "the body is a JSON object naming the run"
if "$SHAKEDOWN" report "$RUN" --format json --db "$db" > "$tmp/report.json" \
	2>/dev/null; then
	is "$(field "$LOG" 1 'json.loads(r["body"]) == json.load(open(sys.argv[1].rsplit("/", 1)[0] + "/report.json"))')" \
		True "the body equals 'shakedown report RUN --format json'"
else
	skip 1 "shakedown report is not there yet"
fi
is "$(outbox "$db" "state, attempts, http_status")" "sent|1|201" \
	"the outbox records it as sent, 1 attempt, HTTP 201"
case $OUT in *"sent $RUN"*) pass "says it was sent";;
	*) fail "says it was sent"; diag "$OUT";; esac
stop_server $SERVER_PID

# -- 500 then 200: retried ------------------------------------------------
make_db "$tmp/b.db"
start_server retry 500,503,200
run_sd retry upload "$RUN" --url "http://127.0.0.1:$PORT/" --db "$tmp/b.db" \
	-v
is "$RC" 0 "500, 503, then 200: sent"
is "$(requests "$LOG")" 3 "three attempts"
is "$(field "$LOG" 3 'r["headers"]["Idempotency-Key"]')" "$RUN" \
	"the retry carries the same Idempotency-Key"
is "$(outbox "$tmp/b.db" "state, attempts, http_status")" "sent|3|200" \
	"outbox: sent after 3 attempts"
case $ERR in *"attempt 1 of 3: HTTP 500"*"retrying"*) pass "-v tells each attempt";;
	*) fail "-v tells each attempt"; diag "$ERR";; esac
stop_server $SERVER_PID

# -- 400: not retried, recorded as failed ---------------------------------
start_server bad echo400
run_sd bad upload "$RUN_A" --url "http://127.0.0.1:$PORT/" --db "$db" -v
is "$RC" 3 "400: exit 3"
is "$(requests "$LOG")" 1 "400 is not retried"
is "$(outbox "$db" "state, attempts, http_status" | tail -n 1)" \
	"failed|1|400" "outbox: a second row (another URL): failed, HTTP 400"
case $ERR in *"refused (HTTP 400"*) pass "the message names the answer";;
	*) fail "the message names the answer"; diag "$ERR";; esac
case $(outbox "$db" last_error) in *'***'*) pass "an echoed token is masked in last_error";;
	*) fail "an echoed token is masked in last_error";; esac
run_sd pending_failed upload --pending --db "$db"
is "$RC" 0 "--pending does not resend a refused report"
is "$(requests "$LOG")" 1 "no new request for the failed row"
stop_server $SERVER_PID

# -- 429 with Retry-After: waits as told ----------------------------------
make_db "$tmp/c.db"
start_server slow 429:1,200
run_sd slow upload latest --url "http://127.0.0.1:$PORT/" --db "$tmp/c.db"
is "$RC" 0 "429 then 200: sent"
is "$(requests "$LOG")" 2 "retried once"
is "$(python3 -c 'import json,sys
t=[json.loads(l)["t"] for l in open(sys.argv[1])]
print(t[1] - t[0] >= 0.9)' "$LOG")" True "waited for Retry-After (1 s)"
stop_server $SERVER_PID

# Retry-After beyond the cap is capped
start_server cap 429:3600,200
SHAKEDOWN_UPLOAD_BACKOFF_MAX=0.2 run_sd cap upload latest \
	--url "http://127.0.0.1:$PORT/x" --db "$tmp/c.db"
is "$RC" 0 "Retry-After: 3600 is capped (SHAKEDOWN_UPLOAD_BACKOFF_MAX)"
stop_server $SERVER_PID

# -- redirects are not followed --------------------------------------------
start_server redir 301
run_sd redir upload latest --url "http://127.0.0.1:$PORT/r" --db "$tmp/c.db"
is "$RC" 3 "a redirect is not followed (exit 3)"
is "$(requests "$LOG")" 1 "nothing sent to the redirect target"
stop_server $SERVER_PID

# -- a server that stalls: timeout, the report waits in the outbox ---------
make_db "$tmp/d.db"
start_server stall stall
"$SHAKEDOWN" upload "$RUN" --url "http://127.0.0.1:$PORT/" --db "$tmp/d.db" \
	--timeout 1 --attempts 2 > "$tmp/out/stall.stdout" \
	2> "$tmp/out/stall.stderr" &
sd_pid=$!
i=0
while [ "$(requests "$LOG")" = 0 ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
args=$(tr '\0' ' ' < /proc/$sd_pid/cmdline 2>/dev/null)
case $args in *upload*) pass "read the running upload's arguments";;
	*) fail "read the running upload's arguments";; esac
n=$(printf '%s' "$args" | grep -c -- "$TOKEN")
is "$n" 0 "the token is not in the process arguments"
wait $sd_pid
RC=$?
is "$RC" 3 "a stalled server: exit 3"
is "$(requests "$LOG")" 2 "each attempt timed out (2 attempts)"
case $(cat "$tmp/out/stall.stderr") in
	*"timed out"*"the report is in the outbox"*"--pending"*)
		pass "says it timed out and where the report is";;
	*) fail "says it timed out and where the report is";
	   diag_file "$tmp/out/stall.stderr";; esac
is "$(outbox "$tmp/d.db" "state, attempts, coalesce(http_status, '-')")" \
	"pending|2|-" "outbox: pending, 2 attempts, no HTTP status"
stop_server $SERVER_PID

# -- server down, then up: --pending delivers, once -------------------------
make_db "$tmp/e.db"
RUN_E=$RUN
start_server down 200
down_port=$PORT
stop_server $SERVER_PID
run_sd down upload "$RUN_E" --url "http://127.0.0.1:$down_port/in" \
	--db "$tmp/e.db"
is "$RC" 3 "server down: exit 3"
is "$(outbox "$tmp/e.db" "state, attempts")" "pending|3" \
	"outbox: pending after 3 attempts"
run_sd list upload --list --db "$tmp/e.db"
is "$RC" 0 "--list exits 0"
case $OUT in *"$RUN_E"*pending*"127.0.0.1:$down_port/in"*)
		pass "--list shows the waiting report and its URL";;
	*) fail "--list shows the waiting report and its URL"; diag "$OUT";; esac
case $OUT in *[Cc]onnect*) pass "--list says why (connection)";;
	*) fail "--list says why (connection)"; diag "$OUT";; esac
start_server down 200 --port "$down_port"
run_sd pending upload --pending --db "$tmp/e.db"
is "$RC" 0 "server up: --pending exits 0"
is "$(requests "$LOG")" 1 "--pending sent the report"
is "$(field "$LOG" 1 'r["headers"]["Idempotency-Key"]')" "$RUN_E" \
	"with the run's Idempotency-Key"
run_sd pending2 upload --pending --db "$tmp/e.db"
is "$RC" 0 "a second --pending exits 0"
is "$(requests "$LOG")" 1 "and sends nothing again"
is "$(outbox "$tmp/e.db" "state, attempts")" "sent|4" "outbox: sent"
run_sd list2 upload --list --db "$tmp/e.db"
case $OUT in *"no reports waiting"*) pass "--list: nothing waiting";;
	*) fail "--list: nothing waiting"; diag "$OUT";; esac
run_sd again upload "$RUN_E" --url "http://127.0.0.1:$PORT/in" --db "$tmp/e.db"
is "$RC" 0 "upload RUN --url sends a sent report again on request"
is "$(requests "$LOG")" 2 "one more request"
stop_server $SERVER_PID

# -- usage --------------------------------------------------------------------
run_sd tok upload "$RUN" --url http://127.0.0.1:1/ --db "$db" --token="$TOKEN"
is "$RC" 2 "--token=... is refused (exit 2)"
case $ERR in *--token-file*) pass "and points to --token-file";;
	*) fail "and points to --token-file";; esac
run_sd tok2 upload "$RUN" --url http://127.0.0.1:1/ --db "$db" --bogus="$TOKEN"
is "$RC" 2 "an unknown option is exit 2, its value not echoed"
run_sd cred upload "$RUN" --url "http://user:$TOKEN@127.0.0.1:1/" --db "$db"
is "$RC" 2 "credentials in the URL are refused"
run_sd nourl upload "$RUN" --db "$db"
is "$RC" 2 "no URL: exit 2"
run_sd norun upload ffffffff --url http://127.0.0.1:1/ --db "$db"
is "$RC" 2 "an unknown run: exit 2"
run_sd nodb upload --pending --db "$tmp/missing.db"
is "$RC" 3 "a missing database: exit 3"
[ -e "$tmp/missing.db" ]
is "$?" 1 "and it is not created"
run_sd ftp upload "$RUN" --url ftp://127.0.0.1/ --db "$db"
is "$RC" 2 "an ftp:// URL is refused"

no_token_anywhere "$db" "$tmp/b.db" "$tmp/c.db" "$tmp/d.db" "$tmp/e.db"
done_testing
