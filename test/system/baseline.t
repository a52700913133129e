#!/bin/sh
# baseline.t - `shakedown baseline create|list|show|delete` on real runs:
# the medians are the run's (checked against sqlite3, and on a copy with
# planted rows whose medians are known exactly), list and show in text,
# JSON and CSV, delete, what `shakedown run` reads back
# (sd_db_baseline_load, sd_baseline_find), and every refusal with its
# message and exit status.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
P="$top_builddir/test/system/baseline_probe"
DB="$TMPD/b.db"
SQ() { _d=$1; shift; sqlite3 -batch "$_d" "$@"; }
# JSON questions are answered by SQLite's own JSON functions
jq() { sqlite3 -batch :memory: "SELECT $2 FROM (SELECT readfile('$1') AS j)"; }
B() { run "$SHAKEDOWN" baseline "$@"; }

# a real run: two groups (split:2 on 4 ranks) of all_reduce and broadcast,
# 3 sizes, in and out of place
run -t 120 "$SHAKEDOWN" run --no-progress --local 4 --scope split:2 \
	--op all_reduce,broadcast -b 1K -e 4K -f 2 -n 3 -w 1 --db "$DB"
is "$rc" 0 "a real run with two groups per test"
uuid=$(SQ "$DB" "SELECT uuid FROM runs")
is "$(SQ "$DB" "SELECT count(*) || ' ' || count(DISTINCT members) FROM tests WHERE status = 'passed'")" \
	"4 2" "four passed test rows, two groups"

# 1. create from the real run: the medians of two groups are their means
cp "$DB" "$TMPD/real.db"
B create --name real --from "${uuid%%-*}" --description "4 ranks of this host" --db "$TMPD/real.db"
is "$rc" 0 "create from a uuid prefix: exit 0"
like "$out" "^baseline 'real' created from run $uuid: 12 values from 4 passed tests$" \
	"says what it made"
is "$(SQ "$TMPD/real.db" "SELECT name || ' ' || from_run_uuid || ' ' || description || ' ' || backend || ' ' || nranks || ' ' || (nodelist IS NOT NULL) || ' ' || (created_at LIKE '____-__-__T__:__:__.___Z') FROM baselines")" \
	"real $uuid 4 ranks of this host gloo 4 1 1" "the baseline row: its run, backend, ranks, nodelist and time"
is "$(SQ "$TMPD/real.db" "SELECT count(*) || ' ' || sum(groups = 2) || ' ' || sum(redop = '') || ' ' || sum(redop = 'sum') FROM baseline_values")" \
	"12 12 6 6" "12 values of 2 groups each; redop '' for broadcast"
is "$(SQ "$TMPD/real.db" "WITH r AS (SELECT t.op, t.dtype, coalesce(t.redop, '') AS redop, t.scope,
	  m.size_bytes, m.in_place, avg(m.busbw_gbs) AS bw, avg(m.time_us) AS tu, count(*) AS n
	FROM tests t JOIN measurements m ON m.test_id = t.id
	WHERE t.status = 'passed' GROUP BY 1, 2, 3, 4, 5, 6)
	SELECT count(*) FROM baseline_values v JOIN r USING (op, dtype, redop, scope, size_bytes, in_place)
	WHERE abs(v.busbw_gbs - r.bw) <= 1e-9 * r.bw AND abs(v.time_us - r.tu) <= 1e-9 * r.tu AND v.groups = r.n")" \
	12 "every value is the median (the mean of the two) of the run's rows"

# 2. planted rows with known medians: an odd count, an even count, and a
# failed test that does not count
K="$TMPD/planted.db"
cp "$DB" "$K"
SQ "$K" "
UPDATE measurements SET busbw_gbs = 10, time_us = 5 WHERE size_bytes = 1024 AND in_place = 0
	AND test_id = (SELECT id FROM tests WHERE op = 'all_reduce' AND members = '0-1');
UPDATE measurements SET busbw_gbs = 20, time_us = 1 WHERE size_bytes = 1024 AND in_place = 0
	AND test_id = (SELECT id FROM tests WHERE op = 'all_reduce' AND members = '2-3');
UPDATE measurements SET busbw_gbs = 7, time_us = 40 WHERE size_bytes = 2048 AND in_place = 0
	AND test_id = (SELECT id FROM tests WHERE op = 'all_reduce' AND members = '0-1');
UPDATE measurements SET busbw_gbs = 8, time_us = 41 WHERE size_bytes = 2048 AND in_place = 0
	AND test_id = (SELECT id FROM tests WHERE op = 'all_reduce' AND members = '2-3');
INSERT INTO tests (run_id, test_index, name, op, dtype, redop, scope, nranks, status, members)
	SELECT run_id, 100, name, op, dtype, redop, scope, nranks, 'passed', '4-5'
	FROM tests WHERE op = 'all_reduce' AND members = '0-1';
INSERT INTO tests (run_id, test_index, name, op, dtype, redop, scope, nranks, status, members)
	SELECT run_id, 101, name, op, dtype, redop, scope, nranks, 'failed', '6-7'
	FROM tests WHERE op = 'all_reduce' AND members = '0-1';
INSERT INTO measurements (test_id, size_bytes, count, in_place, iters, warmup_iters,
	time_us, algbw_gbs, busbw_gbs, checked)
	SELECT t.id, 1024, 256, 0, 3, 1, iif(t.status = 'passed', 3, 0.001), 1,
		iif(t.status = 'passed', 100, 1000), 1
	FROM tests t WHERE t.test_index IN (100, 101);"
B create --name planted --db "$K"
is "$rc" 0 "create from the latest run (the default) with planted rows"
like "$out" "12 values from 5 passed tests" "the planted passed test counts, the failed one not"
v() { SQ "$K" "SELECT printf('%.9g %.9g %d', busbw_gbs, time_us, groups) FROM baseline_values
	WHERE op = 'all_reduce' AND size_bytes = $1 AND in_place = $2"; }
is "$(v 1024 0)" "20 3 3" "three groups (10, 20, 100 GB/s; 5, 1, 3 us): the middle of each, ranked apart"
is "$(v 2048 0)" "7.5 40.5 2" "two groups (7, 8 GB/s; 40, 41 us): the mean of the two"
is "$(SQ "$K" "SELECT max(groups) FROM baseline_values WHERE op = 'broadcast'")" 2 \
	"the other tests keep their two groups"

# what `shakedown run` reads back
run "$P" "$K" planted all_reduce float32 sum split:2 1024 0 \
	all_reduce float32 sum split:2 2048 0 broadcast float32 - split:2 4096 1 \
	all_reduce float32 sum world 1024 0 all_reduce float32 max split:2 1024 0 \
	all_reduce float32 sum split:2 1024 1 all_reduce float32 sum split:2 8192 0
is "$rc" 0 "sd_db_baseline_load reads it"
bc=$(SQ "$K" "SELECT printf('%.9g %.9g %d', busbw_gbs, time_us, groups) FROM baseline_values
	WHERE op = 'broadcast' AND size_bytes = 4096 AND in_place = 1")
ip=$(SQ "$K" "SELECT printf('%.9g %.9g %d', busbw_gbs, time_us, groups) FROM baseline_values
	WHERE op = 'all_reduce' AND size_bytes = 1024 AND in_place = 1")
is "$out" "planted $uuid 12
20 3 3
7.5 40.5 2
$bc
none
none
$ip
none" "sd_baseline_find: each key's value (no redop for broadcast), none for another scope, redop or size"
run "$P" "$K" nosuch
is "$rc:$err" "2:baseline_probe: no baseline 'nosuch'; list the baselines with 'shakedown baseline list'" \
	"an unknown name: SD_ERR_INVALID, and how to see the names"

# 3. list and show
cp "$TMPD/real.db" "$TMPD/two.db"
B create --name second --db "$TMPD/two.db"
is "$rc" 0 "a second baseline"
B list --db "$TMPD/two.db"
is "$rc" 0 "list: exit 0"
is "$(printf '%s\n' "$out" | head -1 | tr -s ' ')" \
	"name created_at from_run_uuid backend nodelist nranks values description" "list: the header"
is "$(printf '%s\n' "$out" | awk 'NR > 1 { print $1, $3, $4, $7 }' | tr '\n' ' ')" \
	"second $uuid gloo 12 real $uuid gloo 12 " "list: newest first, with the run and the number of values"
B list --db "$TMPD/two.db" --format json
printf '%s' "$out" > "$TMPD/l.json"
is "$(jq "$TMPD/l.json" "json_valid(j) || ' ' || json_array_length(j) || ' ' || json_extract(j, '\$[1].name') || ' ' || json_extract(j, '\$[1].description') || ' ' || json_extract(j, '\$[1].values') || ' ' || json_extract(j, '\$[0].from_run_uuid')")" \
	"1 2 real 4 ranks of this host 12 $uuid" "list --format json"
B list --db "$TMPD/two.db" --format table
is "$(printf '%s\n' "$out" | wc -l)" 3 "--format table is the text table"
B show real --db "$TMPD/two.db"
is "$rc" 0 "show: exit 0"
like "$out" "^baseline +real" "show: the name"
like "$out" "from run +$uuid" "show: the run"
like "$out" "description +4 ranks of this host" "show: the description"
like "$out" "op +dtype +redop +scope +size_bytes +in_place +busbw_gbs +time_us +groups" "show: the values' header"
like "$out" "broadcast +float32 +- +split:2 +4096 +1 +[0-9.]+ +[0-9.]+ +2" "show: a value, no redop as -"
is "$(printf '%s\n' "$out" | grep -c 'split:2')" 12 "show: every value"
B show --name real --db "$TMPD/two.db" --format json
printf '%s' "$out" > "$TMPD/s.json"
is "$(jq "$TMPD/s.json" "json_valid(j) || ' ' || json_extract(j, '\$.name') || ' ' || json_extract(j, '\$.from_run_uuid') || ' ' || json_extract(j, '\$.backend') || ' ' || json_extract(j, '\$.nranks') || ' ' || json_array_length(j, '\$.values')")" \
	"1 real $uuid gloo 4 12" "show --format json (and --name): one object with its values"
is "$(jq "$TMPD/s.json" "(SELECT count(*) FROM json_each(j, '\$.values') WHERE json_extract(value, '\$.redop') IS NULL AND json_extract(value, '\$.op') = 'broadcast') || ' ' || json_type(j, '\$.values[0].in_place') || ' ' || json_type(j, '\$.values[0].size_bytes')")" \
	"6 false integer" "show JSON: redop null without a reduction, in_place a boolean"
# (summed in different orders: the last digits may differ)
is "$(jq "$TMPD/s.json" "(SELECT printf('%.9g', sum(json_extract(value, '\$.busbw_gbs'))) FROM json_each(j, '\$.values'))")" \
	"$(SQ "$TMPD/two.db" "SELECT printf('%.9g', sum(busbw_gbs)) FROM baseline_values v JOIN baselines b ON b.id = v.baseline_id WHERE b.name = 'real'")" \
	"show JSON: the values are the database's"
B show real --db "$TMPD/two.db" --format csv
is "$(printf '%s\n' "$out" | head -1)" "op,dtype,redop,scope,size_bytes,in_place,busbw_gbs,time_us,groups" \
	"show --format csv: the header"
is "$(printf '%s\n' "$out" | wc -l)" 13 "show CSV: 12 values"

# 4. delete
B delete real --db "$TMPD/two.db"
is "$rc:$out" "0:baseline 'real' deleted" "delete: exit 0, says so"
is "$(SQ "$TMPD/two.db" "SELECT group_concat(name) FROM baselines")" second "the other baseline stays"
is "$(SQ "$TMPD/two.db" "SELECT count(*) FROM baseline_values")" 12 "its values go with it"
is "$(SQ "$TMPD/two.db" "SELECT count(*) FROM runs")" 1 "the run stays"
B delete second --db "$TMPD/two.db"
B list --db "$TMPD/two.db"
is "$rc:$(printf '%s\n' "$out" | wc -l)" "0:1" "no baselines: list prints the header"
B list --db "$TMPD/two.db" --format json
is "$out" "[]" "and an empty JSON array"

# 5. refusals: exit status, message, one line, nothing written
bad() { # want-rc regex args...
	_w=$1 _r=$2; shift 2
	B "$@"
	is "$rc" "$_w" "$* : exit $_w"
	like "$err" "$_r" "$* : says why"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$* : in one line"
}
bad 2 "baseline 'real' already exists \(from run $uuid, created [0-9T:.Z-]+\); delete it first with 'shakedown baseline delete real' or choose another name" \
	create --name real --db "$TMPD/real.db"
is "$(SQ "$TMPD/real.db" "SELECT count(*) FROM baselines")" 1 "the taken name: nothing written"
bad 2 "no run 'zzzz'; list runs with" create --name x --from zzzz --db "$TMPD/real.db"
cp "$DB" "$TMPD/running.db"
SQ "$TMPD/running.db" "UPDATE runs SET status = 'running', finished_at = NULL, hostname = '$(hostname)', pid = $$,
	heartbeat_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
bad 2 "run $uuid is still running; wait until it ends, or take the baseline from another run" \
	create --name x --db "$TMPD/running.db"
is "$(SQ "$TMPD/running.db" "SELECT status || ' ' || (SELECT count(*) FROM baselines) FROM runs")" "running 0" \
	"a live run is left running, and no baseline written"
cp "$DB" "$TMPD/failed.db"
SQ "$TMPD/failed.db" "UPDATE tests SET status = 'failed'; UPDATE runs SET status = 'failed'"
bad 2 "run $uuid \(failed\) has no passed measurements \(4 tests, none passed with measurements\); take the baseline from a run whose tests passed" \
	create --name x --db "$TMPD/failed.db"
is "$(SQ "$TMPD/failed.db" "SELECT count(*) FROM baselines")" 0 "no passed measurements: nothing written"
bad 2 "no baseline 'nope'; list the baselines with 'shakedown baseline list'" show nope --db "$TMPD/real.db"
bad 2 "no baseline 'nope'; list the baselines with 'shakedown baseline list'" delete nope --db "$TMPD/real.db"
bad 2 "no baseline 'nope'" show nope --format json --db "$TMPD/real.db"
bad 2 "bad baseline name 'a b'; use 1 to 63 letters, digits" create --name "a b" --db "$TMPD/real.db"
bad 2 "bad baseline name '-x'" create --name=-x --db "$TMPD/real.db"
bad 2 "missing subcommand; use create, list, show or delete" --db "$TMPD/real.db"
bad 2 "unknown subcommand 'lsit'; did you mean 'list'\?" lsit --db "$TMPD/real.db"
bad 2 "create needs a name, e.g. 'shakedown baseline create --name" create --db "$TMPD/real.db"
bad 2 "show needs a name" show --db "$TMPD/real.db"
bad 2 "two names, 'a' and --name 'b'; give one" show a --name b --db "$TMPD/real.db"
bad 2 "unexpected argument 'x'; 'baseline list' takes no name" list x --db "$TMPD/real.db"
bad 2 "--from is for 'baseline create' only" show real --from zzzz --db "$TMPD/real.db"
bad 2 "--format is for 'baseline list' and 'show' only" create --name y --format json --db "$TMPD/real.db"
bad 2 "unknown format 'xml'; use text, json or csv" list --format xml --db "$TMPD/real.db"
bad 2 "unknown option '--bogus'" list --bogus --db "$TMPD/real.db"
bad 2 "no database \(--db none\)" list --db none
bad 3 "missing.db: no such database; pass --db or set SHAKEDOWN_DB" list --db "$TMPD/missing.db"
SHAKEDOWN_DB="$TMPD/real.db" B list
like "$out" "^name .*
real " "SHAKEDOWN_DB without --db"
is "$(SQ "$TMPD/real.db" "SELECT count(*) FROM baselines")" 1 "after every refusal, the one baseline is still there"

# a read-only file: list and show read it, create and delete are refused
cp "$TMPD/real.db" "$TMPD/ro.db"
chmod 444 "$TMPD/ro.db"
if [ -w "$TMPD/ro.db" ]; then
	skip 5 "running as root: a read-only file is writable"
else
	B list --db "$TMPD/ro.db"
	is "$rc" 0 "read-only file: list works"
	bad 3 "ro.db: not writable \(Permission denied\); pass --db with another path" \
		create --name z --db "$TMPD/ro.db"
	B delete real --db "$TMPD/ro.db"
	is "$rc" 3 "read-only file: delete exits 3"
fi

# a lock held by another process past the busy timeout
if command -v python3 >/dev/null; then
	python3 -c '
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
db.execute("UPDATE runs SET message = ?", ("held",))
print("held", flush=True)
start = time.time()
while not os.path.exists(sys.argv[2]) and time.time() - start < 120:
    time.sleep(0.05)
db.execute("ROLLBACK")
' "$TMPD/real.db" "$TMPD/release" >"$TMPD/held" 2>&1 &
	holder=$!
	i=0
	while ! grep -q held "$TMPD/held" && [ $i -lt 1200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	ok 'grep -q held "$TMPD/held"' "another process holds the write lock"
	export SHAKEDOWN_DB_BUSY_TIMEOUT_MS=300
	bad 3 "real.db: database is locked by another process for more than 300 ms; retry later, raise SHAKEDOWN_DB_BUSY_TIMEOUT_MS" \
		create --name z --db "$TMPD/real.db"
	bad 3 "database is locked by another process" delete real --db "$TMPD/real.db"
	unset SHAKEDOWN_DB_BUSY_TIMEOUT_MS
	: >"$TMPD/release"
	wait "$holder"
	B create --name z --db "$TMPD/real.db"
	is "$rc" 0 "once the lock is gone, create works"
else
	skip 8 "python3 is needed to hold a lock"
fi

# help
B --help
is "$rc" 0 "--help: exit 0"
like "$out" "^usage: shakedown baseline create --name NAME" "--help prints the usage"

done_testing
