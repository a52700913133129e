#!/bin/sh
# runs_cmd.t - `shakedown runs` on a database of real runs (a passed
# collectives run, one that fails its expectations with a planted slow
# rank, a gemm run) and runs recorded with known start times by
# test/db_writer through the real recorder: newest first, every filter,
# text, CSV and JSON, the errors, and every "no run" message pointing at
# the command.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
W="$top_builddir/test/system/db_writer"
DB="$TMPD/runs.db"
jq() { sqlite3 -batch :memory: "SELECT $2 FROM (SELECT readfile('$1') AS j)"; }

# two made-up runs on known days (2026-01-01 and 2026-01-02), then the real ones
"$W" -q -u aaaaaaaa-0000-4000-8000- -T 1767225600 "$DB" &&
"$W" -q -u bbbbbbbb-0000-4000-8000- -T 1767312000 -w "$DB"
is "$?" 0 "two runs recorded on known days"
run -t 120 "$SHAKEDOWN" run --local 2 -b 1K -e 4K --db "$DB"
is "$rc" 0 "a passed run"
cat >"$TMPD/slow.yaml" <<'PLAN'
name: slowtest
defaults: {min_bytes: 1K, max_bytes: 16K, expect: {peers: 0.8}, retries: 1}
tests:
  - {op: all_reduce, scope: "split:2"}
PLAN
SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=20000 run -t 120 "$SHAKEDOWN" run \
	--local 4 --plan "$TMPD/slow.yaml" --db "$DB"
is "$rc" 6 "a run with a planted slow rank fails its expectations (exit 6)"
slow=$(sqlite3 "$DB" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
run -t 120 "$SHAKEDOWN" gemm --local 1 --db "$DB"
is "$rc" 0 "a gemm run"

run "$SHAKEDOWN" runs --db "$DB"
is "$rc" 0 "runs: exit 0"
is "$(printf '%s\n' "$out" | head -1 | tr -s ' ')" \
	"run started kind plan nodes ranks status exit tests_passed tests failed_subjects bad_nodes" \
	"its columns"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 6 "a header and the 5 runs"
like "$(printf '%s\n' "$out" | sed -n 2p)" "^[0-9a-f]{8} .* gemm +gemm " \
	"newest first: the gemm run, its plan named gemm"
like "$(printf '%s\n' "$out" | sed -n 3p)" \
	"^${slow%%-*} .* collectives +slowtest .* 4 +failed +6 +[0-9]+ +[0-9]+ +[1-9][0-9]* " \
	"the slow run: its plan's name, 4 ranks, failed, exit 6, its failed subjects"
like "$(printf '%s\n' "$out" | sed -n 4p)" " collectives +default .* passed +0 " \
	"the passed run of the built-in plan"
like "$(printf '%s\n' "$out" | sed -n 6p)" "^aaaaaaaa +2026-01-01T00:00:00 " \
	"the oldest last, id in 8 characters"

run "$SHAKEDOWN" runs --db "$DB" --status failed --long
is "$(printf '%s\n' "$out" | sed 1d | cut -d' ' -f1 | sort | tr '\n' ' ')" \
	"$(sqlite3 "$DB" "SELECT uuid FROM runs WHERE status = 'failed' ORDER BY uuid" | tr '\n' ' ')" \
	"--status failed --long: the failed runs, whole ids"
run "$SHAKEDOWN" runs --db "$DB" --kind gemm
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 2 "--kind gemm: one run"
run "$SHAKEDOWN" runs --db "$DB" --plan slowtest --format csv
is "$(printf '%s\n' "$out" | sed -n 2p | cut -d, -f1,4,7)" "$slow,slowtest,failed" \
	"--plan slowtest --format csv: the whole id, its plan and status"
run "$SHAKEDOWN" runs --db "$DB" --since 2026-01-02 --until 2026-01-02
is "$rc" 0 "--since and --until: exit 0"
run "$SHAKEDOWN" runs --db "$DB" --status failed --since 2026-01-01 --format csv
is "$(printf "%s\n" "$out" | sed 1d | wc -l | tr -d " ")" 2 "the README's --status failed --since 2026-01-01 --format csv: the 2 failed runs"
run "$SHAKEDOWN" runs --db "$DB" --since 2026-01-02 --until 2026-01-02
is "$(printf '%s\n' "$out" | sed 1d | cut -c1-8)" bbbbbbbb \
	"--since and --until one day: that day's run only"
run "$SHAKEDOWN" runs --db "$DB" --limit 2 --format json
printf '%s' "$out" >"$TMPD/runs.json"
is "$(jq "$TMPD/runs.json" "json_array_length(j)")" 2 "--limit 2 --format json: two objects"
is "$(jq "$TMPD/runs.json" "json_extract(j, '\$[1].run') || ' ' || json_extract(j, '\$[1].exit')")" \
	"$slow 6" "JSON gives the whole id and the exit status as a number"
run "$SHAKEDOWN" runs --db "$DB" --limit 0
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 6 "--limit 0: all of them"
run "$SHAKEDOWN" runs --db "$DB" --plan nope
is "$rc" 0 "a filter that matches nothing: exit 0"
like "$err" "no run matches in $DB" "and says so"

# bad input: a clear message, exit 2
run "$SHAKEDOWN" runs --db "$DB" --status faild
is "$rc" 2 "an unknown status: exit 2"
like "$err" "--status 'faild' must be passed, failed, error, cancelled, aborted or running; did you mean 'failed'\\?" \
	"names the values and the nearest"
run "$SHAKEDOWN" runs --db "$DB" --since yesterday
is "$rc" 2 "a bad date: exit 2"
like "$err" "bad date 'yesterday' for --since; use YYYY-MM-DD" "says the form"
run "$SHAKEDOWN" runs --db "$DB" --limit -1
is "$rc" 2 "a negative limit: exit 2"
run "$SHAKEDOWN" runs --db none
is "$rc" 2 "--db none: exit 2"
run "$SHAKEDOWN" runs extra --db "$DB"
is "$rc" 2 "an argument it does not take: exit 2"

# every "no run" points at it
run "$SHAKEDOWN" report zzzz --db "$DB"
is "$rc" 2 "report of no such run: exit 2"
like "$err" "no run 'zzzz'; list runs with: shakedown runs --db .*runs.db" \
	"points at shakedown runs with the database"
run "$SHAKEDOWN" compare zzzz aaaa --db "$DB"
like "$err" "list runs with: shakedown runs" "compare too"

run "$SHAKEDOWN" help runs
like "$out" "^usage: shakedown runs" "help runs"
run "$SHAKEDOWN" help
like "$out" "runs +list the recorded runs" "and the command list names it"
done_testing
