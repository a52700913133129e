#!/bin/sh
# db_commands.t - report, history, compare and db on a database the test
# builds with known numbers (test/db_writer records made-up runs through
# the real sink): text, CSV and JSON output, filters, regressions and the
# exit statuses of bad options and bad runs.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
W="$top_builddir/test/system/db_writer"
DB="$TMPD/r.db"
A=aaaaaaaa-0000-4000-8000-000000000000
B=bbbbbbbb-0000-4000-8000-000000000000
C=cccccccc-0000-4000-8000-000000000000
# JSON questions are answered by SQLite's own JSON functions
jq() { sqlite3 -batch :memory: "SELECT $2 FROM (SELECT readfile('$1') AS j)"; }

# A: 2026-01-01, busbw 10..13 GB/s; B: a day later, 10% to 7.7% slower;
# C: on nodeB, with wrong data in its second test
"$W" -q -u aaaaaaaa-0000-4000-8000- -T 1767225600 -b 10 "$DB" &&
"$W" -q -u bbbbbbbb-0000-4000-8000- -T 1767312000 -b 9 "$DB" &&
"$W" -q -u cccccccc-0000-4000-8000- -T 1767398400 -b 10 -H nodeB -w "$DB"
is "$?" 0 "three runs recorded"

# report
run "$SHAKEDOWN" report --db "$DB"
is "$rc" 0 "report: exit 0"
like "$out" "^run +$C" "report shows the latest run by default"
like "$out" "status +failed \(exit 1\): wrong data in 1 test" "with its status and why"
like "$out" "2 +1 +all_gather +float32 +- +- +world +- +2 +8 +13.00 +3 +failed +3 wrong elements; first at 8192 bytes, rank 1, index 7" \
	"the failed test, its verdict and the first wrong element"
like "$out" "1 +1 +all_reduce +float32 +sum .* passed" "the passed test, numbered from 1 as everywhere"
like "$out" "1 +all_reduce +float32 +1024 +256 +0 +20 +[0-9.]+ +[0-9.]+ +[0-9.]+ +5.00 +10.00 +0 +ring +1 +-" \
	"measurements with units in the header"
SHAKEDOWN_DB="$DB" run "$SHAKEDOWN" report aaaa
like "$out" "^run +$A" "a uuid prefix, and SHAKEDOWN_DB without --db"
run "$SHAKEDOWN" report "$B" --db "$DB" --format csv
is "$(printf '%s\n' "$out" | head -1)" \
	"test,name,dtype,size_bytes,count,in_place,iters,time_us,time_us_min,time_us_max,algbw_gbs,busbw_gbs,wrong,algo,attempt,members" \
	"report CSV header"
is "$(printf '%s\n' "$out" | wc -l)" 17 "report CSV: 16 measurements"
run "$SHAKEDOWN" report "$C" --db "$DB" --format json
printf '%s' "$out" > "$TMPD/c.json"
is "$(jq "$TMPD/c.json" "json_valid(j)")" 1 "report JSON is valid"
is "$(jq "$TMPD/c.json" "json_extract(j, '\$.schema_version')")" 1 "with schema_version 1"
is "$(jq "$TMPD/c.json" "json_extract(j, '\$.run.uuid') || ' ' || json_extract(j, '\$.run.status')")" \
	"$C failed" "the run"
is "$(jq "$TMPD/c.json" "json_extract(j, '\$.job.nodelist') || ' ' || json_array_length(j, '\$.ranks') || ' ' || json_extract(j, '\$.ranks[1].device.name')")" \
	"nodeB 2 CPU (test)" "job, ranks and devices"
is "$(jq "$TMPD/c.json" "json_extract(j, '\$.hosts[0].host') || ' ' || json_extract(j, '\$.hosts[0].environment.kernel')")" \
	"nodeB 6.1.0" "hosts with their environment"
is "$(jq "$TMPD/c.json" "json_array_length(j, '\$.tests') || ' ' || json_array_length(j, '\$.tests[1].measurements')")" \
	"2 8" "tests with their measurements"
is "$(jq "$TMPD/c.json" "json_extract(j, '\$.tests[0].verdict.result') || ' ' || json_extract(j, '\$.tests[1].verdict.result')")" \
	"passed failed" "per-test verdicts"
like "$(jq "$TMPD/c.json" "json_extract(j, '\$.tests[1].verdict.reason')")" \
	"^3 wrong elements; first at 8192 bytes, rank 1, index 7: expected 1.5" "a failed test says why"
is "$(jq "$TMPD/c.json" "json_extract(j, '\$.tests[1].measurements[7].first_wrong.got')")" \
	"1.5000001 (0x3fc00001)" "the first wrong element"
is "$(jq "$TMPD/c.json" "json_extract(j, '\$.verdict.result') || ' ' || json_extract(j, '\$.verdict.tests_failed')")" \
	"failed 1" "the run's verdict"
# the document matches the rows
is "$(jq "$TMPD/c.json" "(SELECT sum(json_extract(m.value, '\$.busbw_gbs')) FROM json_each(j, '\$.tests') t, json_each(t.value, '\$.measurements') m)")" \
	"$(sqlite3 "$DB" "SELECT sum(busbw_gbs) FROM measurements_v WHERE run_uuid = '$C'")" \
	"JSON measurements are the database's"

# history
run "$SHAKEDOWN" history --db "$DB" --op all_reduce --size 4K
is "$rc" 0 "history: exit 0"
is "$(printf '%s\n' "$out" | head -1)" \
	"started_at                run_uuid                              run_status  nodelist  nranks  dtype    size_bytes  busbw_gbs  time_us  wrong" \
	"history text header"
is "$(printf '%s\n' "$out" | awk 'NR > 1 { print $2, $8 }' | tr '\n' ' ')" \
	"$A 12.00 $B 11.00 $C 12.00 " "history: busbw of each run, oldest first"
run "$SHAKEDOWN" history --db "$DB" --op all_reduce --size 4K --host nodeB --format csv
is "$out" "started_at,run_uuid,run_status,nodelist,nranks,dtype,size_bytes,busbw_gbs,time_us,wrong
2026-01-03T00:00:00.000Z,$C,failed,nodeB,2,float32,4096,12.0,0.682666666666667,0" \
	"history --host, as CSV"
run "$SHAKEDOWN" history --db "$DB" --op all_reduce --since 2026-01-02 --until 2026-01-02 --dtype float32 --format json
printf '%s' "$out" > "$TMPD/h.json"
is "$(jq "$TMPD/h.json" "json_array_length(j) || ' ' || json_extract(j, '\$[0].run_uuid') || ' ' || json_extract(j, '\$[3].size_bytes')")" \
	"4 $B 8192" "history --since/--until (a whole day), as JSON"
run "$SHAKEDOWN" history --db "$DB" --op broadcast
is "$rc:$(printf '%s\n' "$out" | wc -l)" "0:1" "history of an op never run: just the header"

# compare
run "$SHAKEDOWN" compare aaaa bbbb --db "$DB"
is "$rc" 1 "compare with a regression: exit 1"
like "$out" "all_reduce +float32 +sum +- +world +4 +8192 +13.00 +12.00 +-8.71 +-10.00 +5.00 +REGRESSION" \
	"per test: its sizes, both values at the largest, the median and worst change, the bound and the flag"
like "$out" "2 regressions beyond 5% and A's noise" "counts the regressions"
run "$SHAKEDOWN" compare aaaa bbbb --db "$DB" --tolerance 15%
is "$rc" 0 "compare within --tolerance 15%: exit 0"
like "$out" "0 regressions beyond 15%" "no regression"
run "$SHAKEDOWN" compare bbbb aaaa --db "$DB" --format csv
is "$rc" 0 "faster is not a regression"
like "$out" "all_gather,float32,,,world,4,8192,12.0,13.0,9.5[45],8.33,5.0,improved" "improvements are marked, as CSV"
run "$SHAKEDOWN" compare aaaa cccc --db "$DB" --format json
printf '%s' "$out" > "$TMPD/c2.json"
is "$(jq "$TMPD/c2.json" "json_array_length(j) || ' ' || json_extract(j, '\$[0].verdict')")" \
	"2 ok" "compare as JSON"

# a run compared with itself has no regression
run "$SHAKEDOWN" compare aaaa aaaa --db "$DB"
is "$rc" 0 "compare A A: exit 0"
like "$out" "0 regressions beyond 5%" "compare A A: no regression"
# A's noise: its repeats (in and out of place) disagree by a ninth of
# their median at every size, so a test's median change counts only
# beyond 3 x 11.1% = 33.33%: B's 8.7% drop is within it, F's 43.6% not
D2="$TMPD/noise.db"
"$W" -q -u dddddddd-0000-4000-8000- -T 1767225600 -b 10 "$D2" &&
"$W" -q -u eeeeeeee-0000-4000-8000- -T 1767312000 -b 9 "$D2" &&
"$W" -q -u ffffffff-0000-4000-8000- -T 1767312000 -b 5 "$D2" &&
sqlite3 "$D2" "UPDATE measurements SET busbw_gbs = busbw_gbs * 0.8 WHERE
	in_place = 1 AND test_id IN (SELECT t.id FROM tests t JOIN runs r
	ON r.id = t.run_id WHERE r.uuid LIKE 'dddd%')"
run "$SHAKEDOWN" compare dddd eeee --db "$D2"
is "$rc" 0 "a drop within A's noise: exit 0"
like "$out" "all_reduce +float32 +sum +- +world +4 +8192 +13.00 +12.00 +-8.71 +-10.00 +33.33 +ok" \
	"its bound is 3 x A's noise"
run "$SHAKEDOWN" compare dddd ffff --db "$D2"
is "$rc" 1 "a drop beyond A's noise: exit 1"
like "$out" "all_reduce +float32 +sum +- +world +4 +8192 +13.00 +8.00 +-43.56 +-50.00 +33.33 +REGRESSION" \
	"is a regression"
# real runs: a rank slowed by 50 ms per operation (a hundred times a
# healthy 1K or 4K all_reduce here) is a regression against a healthy run,
# whatever the healthy run's own noise (the bound is at most 95%)
D3="$TMPD/real.db"
run -t 120 "$SHAKEDOWN" run --local 4 --op all_reduce -b 1K -e 4K -n 5 -w 1 \
	--db "$D3" --no-progress
is "$rc" 0 "a healthy run"
SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=50000 run -t 120 "$SHAKEDOWN" run \
	--local 4 --op all_reduce -b 1K -e 4K -n 5 -w 1 --db "$D3" --no-progress
is "$rc" 0 "a run with a slow rank (no expectation: it passes)"
h=$(sqlite3 "$D3" "SELECT uuid FROM runs ORDER BY id LIMIT 1")
sl=$(sqlite3 "$D3" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
run "$SHAKEDOWN" compare "$h" "$sl" --db "$D3"
is "$rc" 1 "compare healthy slow: exit 1"
like "$out" "all_reduce +float32 +sum +- +world +2 +4096 .* REGRESSION" \
	"the slow rank's run is slower beyond the healthy run's noise"
run "$SHAKEDOWN" compare "$sl" "$sl" --db "$D3"
is "$rc" 0 "a real run compared with itself: exit 0"
# compare --subjects: each judged subject (here the blocks of a split:2
# test judged against their peers) then and now; the slow rank's block is
# a regression of its own.  The rank waits 300 ms before each operation at
# the judged size only (4K, out of place): a drop beyond the 95% cap
# however noisy the healthy run is
cat >"$TMPD/split.yaml" <<'PLAN'
name: split
defaults: {min_bytes: 1K, max_bytes: 4K, iters: 5, warmup: 1,
           expect: {peers: 0.0001}}
tests:
  - {op: all_reduce, scope: "split:2"}
PLAN
run -t 120 "$SHAKEDOWN" run --local 4 --plan "$TMPD/split.yaml" --db "$D3" \
	--no-progress
is "$rc" 0 "a healthy split:2 run"
h2=$(sqlite3 "$D3" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=300000,size=4K,in_place=0 run -t 120 \
	"$SHAKEDOWN" run --local 4 --plan "$TMPD/split.yaml" --db "$D3" \
	--no-progress
is "$rc" 0 "a slow rank in block 0-1 (within peers 0.0001: it passes)"
sl2=$(sqlite3 "$D3" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
run "$SHAKEDOWN" compare "$h2" "$sl2" --db "$D3" --subjects
is "$rc" 1 "compare --subjects healthy slow: exit 1"
like "$out" "1 +all_reduce +float32 +split:2 +group +ranks 0-1 +peers +4096 +GB/s .* REGRESSION" \
	"the slow block is a regression of its own"
run "$SHAKEDOWN" compare "$sl2" "$sl2" --db "$D3" --subjects
is "$rc" 0 "compare --subjects A A: exit 0"
like "$out" "0 regressions beyond 5%" "compare --subjects A A: no regression"
run "$SHAKEDOWN" compare "$h" "$h2" --db "$D3" --subjects --format csv
is "$(printf '%s\n' "$out" | sed 1d | awk -F, '{ print $NF }' | sort | uniq -c |
	tr -s ' ')" " 2 only in B" \
	"a run without verdicts: each subject of the other only in B"

# db info
run "$SHAKEDOWN" db info --db "$DB"
like "$out" "runs +3 \(1 failed, 2 passed\)" "db info counts runs by status"
like "$out" "measurements +48" "and measurements"

# help, bad options, bad runs
for c in report history compare db; do
	run "$SHAKEDOWN" $c --help
	is "$rc" 0 "$c --help: exit 0"
	like "$out" "^usage: shakedown $c" "$c --help prints its usage"
done
bad() { # want-rc regex args...
	_w=$1 _r=$2; shift 2
	run "$SHAKEDOWN" "$@"
	is "$rc" "$_w" "$* : exit $_w"
	like "$err" "$_r" "$* : says why"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$* : in one line"
}
bad 2 "unknown format 'xml'" report --db "$DB" --format xml
bad 2 "unknown option '--bogus'" report --db "$DB" --bogus
bad 2 "no run 'zzzz'" report zzzz --db "$DB"
bad 2 "is ambiguous" report "" --db "$DB"
bad 2 "--op is required" history --db "$DB"
bad 2 "did you mean 'all_reduce'" history --db "$DB" --op allreduce
bad 2 "bad size '4Q'" history --db "$DB" --op all_reduce --size 4Q
bad 2 "bad date 'yesterday'" history --db "$DB" --op all_reduce --since yesterday
bad 2 "give two runs" compare aaaa --db "$DB"
bad 2 "bad tolerance 'lots'" compare aaaa bbbb --db "$DB" --tolerance lots
bad 2 "unknown subcommand 'frob'" db frob --db "$DB"
bad 3 "no such database" report --db "$TMPD/missing.db"
bad 3 "missing.db: no such database" history --op all_reduce --db "$TMPD/missing.db"

done_testing
