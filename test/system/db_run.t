#!/bin/sh
# db_run.t - real runs into the database: the rows are what was printed;
# SIGTERM mid-run leaves the run 'cancelled' with its completed tests
# intact; SIGKILL leaves it 'running' until the next open marks it
# 'aborted', completed tests intact.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
DB="$TMPD/x.db"
SQ() { sqlite3 -batch "$DB" "$@"; }

# 1. what was printed is what was recorded
run -t 60 "$SHAKEDOWN" run --no-progress --local 2 --op all_reduce -b 1K -e 8K \
	-f 2 --db "$DB" --format json
is "$rc" 0 "a run recorded into a new database"
printf '%s\n' "$out" | grep '^{' | sed '1s/^/[/; $!s/$/,/; $s/$/]/' > "$TMPD/printed.json"
printed=$(sqlite3 -batch :memory: "SELECT json_extract(value, '\$.run'),
	json_extract(value, '\$.size_bytes'), json_extract(value, '\$.in_place'),
	printf('%.3f', json_extract(value, '\$.time_us')),
	printf('%.6f', json_extract(value, '\$.busbw_gbs')),
	json_extract(value, '\$.wrong')
	FROM json_each(readfile('$TMPD/printed.json'))
	ORDER BY 2, 3")
recorded=$(SQ "SELECT run_uuid, size_bytes, in_place, printf('%.3f', time_us),
	printf('%.6f', busbw_gbs), wrong FROM measurements_v ORDER BY 2, 3")
is "$(printf '%s\n' "$printed" | wc -l)" 8 "8 measurements printed"
is "$recorded" "$printed" "the rows are what was printed"
is "$(SQ "SELECT status || ' ' || exit_status || ' ' || nranks || ' ' || backend FROM runs")" \
	"passed 0 2 gloo" "the run: passed, exit 0, 2 ranks, gloo"
is "$(SQ "SELECT count(*) || ' ' || count(DISTINCT pid) FROM ranks")" "2 2" "both ranks"
is "$(SQ "SELECT launcher || ' ' || nnodes FROM jobs")" "local 1" "the job"
is "$(SQ "SELECT json_valid(env_json) FROM host_env")" 1 "the host's environment"
uuid=$(SQ "SELECT uuid FROM runs")
run "$SHAKEDOWN" report "$uuid" --db "$DB" --format json
printf '%s' "$out" > "$TMPD/report.json"
is "$(sqlite3 -batch :memory: "SELECT json_extract(j, '\$.run.uuid') || ' ' ||
	json_array_length(j, '\$.tests[0].measurements') || ' ' ||
	json_extract(j, '\$.verdict.result')
	FROM (SELECT readfile('$TMPD/report.json') AS j)")" \
	"$uuid 8 passed" "report --format json of the real run"

# wait_tests DB N: until N tests of the last run are committed
wait_tests() {
	_i=0
	while [ $_i -lt 600 ]; do
		_n=$(sqlite3 -batch -readonly "$1" "SELECT count(*) FROM tests" 2>/dev/null)
		[ "${_n:-0}" -ge "$2" ] && break
		sleep 0.1; _i=$((_i + 1))
	done
}
# complete TESTS: passed tests whose measurements are all there (9 sizes x 2)
complete() { sqlite3 -batch "$1" "SELECT count(*) FROM tests_v
	WHERE status = 'passed' AND measurements = 18"; }

# 2. SIGTERM mid-run: cancelled, completed tests intact
T="$TMPD/term.db"
timeout 120 "$SHAKEDOWN" run --no-progress --local 2 --op all_reduce -o all \
	-b 1K -e 256K -f 2 -n 200 -w 1 --db "$T" >"$TMPD/o" 2>"$TMPD/e" &
pid=$!
wait_tests "$T" 1
kill -TERM "$pid"
wait "$pid"
is "$?" 5 "SIGTERM: exit 5"
is "$(sqlite3 "$T" "SELECT status || ' ' || exit_status FROM runs")" "cancelled 5" \
	"the run is recorded as cancelled"
like "$(sqlite3 "$T" "SELECT message FROM runs")" "cancelled by a signal" "with why"
ok "[ $(complete "$T") -ge 1 ]" "completed tests are intact ($(complete "$T") of them)"
is "$(sqlite3 "$T" "SELECT count(*) FROM tests WHERE status NOT IN ('passed', 'cancelled')")" 0 \
	"no other test status"

# 3. SIGKILL mid-run (rank 0 stalls in the second test, then is killed)
K="$TMPD/kill.db"
SHAKEDOWN_FAULT=rank=0,kind=stall,op=all_gather timeout 120 "$SHAKEDOWN" run \
	--no-progress --local 2 --op all_reduce,all_gather -b 1K -e 256K -f 2 -n 5 \
	-w 1 -T 30 --db "$K" >"$TMPD/o" 2>"$TMPD/e" &
pid=$!
wait_tests "$K" 1
rank0=$(sqlite3 "$K" "SELECT pid FROM runs")
kill -KILL "$rank0"
wait "$pid"
is "$(sqlite3 "$K" "SELECT status FROM runs")" running "after SIGKILL the run is left 'running'"
is "$(complete "$K")" 1 "the completed test is intact"
run "$SHAKEDOWN" db check --db "$K"
is "$(sqlite3 "$K" "SELECT status || ' ' || message FROM runs")" \
	"aborted aborted: its process $rank0 on $(hostname) is gone" \
	"the next open marks it 'aborted' and says why"
run "$SHAKEDOWN" report --db "$K"
like "$out" "status +aborted" "report shows it aborted"

done_testing
