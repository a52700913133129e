#!/bin/sh
# run_verdicts.t - expectations on one host, with faults planted for real:
# a slow rank (SHAKEDOWN_FAULT kind=slow) in one block of split:2 fails its
# peers expectation, is measured again (retries) and still fails: exit 6,
# the verdicts, the suspect, the report's sections and JSON; a healthy run
# with the same plan exits 0; a floor no host can reach on a one-host job
# names that host, and --drain with an scontrol that cannot reach a
# controller says so and keeps the run's record and exit status; an
# unknown --baseline is a usage error.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"

DB="$TMPD/v.db"
PLAN="$TMPD/v.yaml"
cat >"$PLAN" <<'EOF'
name: v
defaults:
  dtype: float32
  min_bytes: 64K
  max_bytes: 256K
  iters: 10
  warmup: 1
  in_place: false
  # the planted rank is ~100 times slower; a busy machine's noise is not
  # 10 times, twice in a row
  expect: {peers: 0.1}
  retries: 2
tests:
  - {op: sendrecv, scope: split:2}
EOF
q() { sqlite3 -batch "$DB" "$1"; }
S="$SHAKEDOWN run --no-progress --local 4 --plan $PLAN --db $DB"

run -t 120 $S
is "$rc" 0 "a healthy run with expectations: exit 0"
is "$(q "SELECT group_concat(subject || ':' || expectation || ':' || status,
	' ') FROM (SELECT * FROM verdicts ORDER BY id)")" \
	"ranks 0-1:data:passed ranks 0-1:peers:passed ranks 2-3:data:passed ranks 2-3:peers:passed" \
	"a verdict per block and expectation, all passed"
is "$(q "SELECT count(*) FROM suspects")" 0 "nobody is blamed"

SHAKEDOWN_FAULT=rank=2,kind=slow,delay_us=50000 run -t 120 $S
is "$rc" 6 "a slow rank in block 2-3: exit 6"
like "$out" "# FAILED group ranks 2-3: peers: busbw [0-9.]+ GB/s at 256K is 0\\.[0-9]+ x the median [0-9.]+ GB/s of the other groups \\(1; at least 0\\.1\\) \\(measured 3 times\\)" \
	"the failed expectation is printed after its test, with the numbers"
like "$err" "1 subject failed its expectations; bad nodes: none" \
	"the end says so: a block is not a node"
uuid=$(q "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
is "$(q "SELECT status || ' ' || exit_status FROM runs WHERE uuid = '$uuid'")" \
	"failed 6" "recorded as failed with exit status 6"
is "$(q "SELECT group_concat(members, ' ') FROM (SELECT t.members FROM tests t
	JOIN runs r ON r.id = t.run_id WHERE r.uuid = '$uuid'
	ORDER BY t.test_index)")" "0-1 2-3 2-3 2-3" \
	"the failing block was measured again, alone, and every attempt kept"
is "$(q "SELECT v.attempts || ' ' || t.test_index FROM verdicts v
	JOIN tests t ON t.id = v.test_id JOIN runs r ON r.id = v.run_id
	WHERE r.uuid = '$uuid' AND v.status = 'failed'")" "3 3" \
	"its verdict is the last attempt's"
is "$(q "SELECT kind || '|' || subject || '|' || bad_node FROM suspects s
	JOIN runs r ON r.id = s.run_id WHERE r.uuid = '$uuid'")" \
	"group|ranks 2-3|0" "the block is the suspect, not a bad node"
run "$SHAKEDOWN" report --db "$DB"
like "$out" "failed expectations
test +kind +subject +expectation .*
2 +group +ranks 2-3 +peers +262144 " "report lists the failed expectations"
like "$out" "suspects
kind +subject +hosts +bad_node +reason
group +ranks 2-3 " "and the suspects"
run "$SHAKEDOWN" report --db "$DB" --format json
printf '%s' "$out" >"$TMPD/r.json"
is "$(sqlite3 :memory: "SELECT json_extract(readfile('$TMPD/r.json'),
	'\$.suspects[0].subject')")" "ranks 2-3" "the JSON report has the suspects"
is "$(sqlite3 :memory: "SELECT group_concat(json_extract(t.value, '\$.index')
	|| ' ' || json_extract(v.value, '\$.expectation') || ' ' ||
	json_extract(v.value, '\$.attempts'), ',') FROM json_each(
	readfile('$TMPD/r.json'), '\$.tests') t, json_each(t.value,
	'\$.verdicts') v WHERE json_extract(v.value, '\$.status') = 'failed'")" \
	"3 peers 3" "and each test's verdicts (the failed one on the last attempt)"
run "$SHAKEDOWN" report --bad-nodes --db "$DB"
is "$(printf '%s\n' "$out" | head -n 1)" "" "report --bad-nodes: no bad node"
like "$out" "^
# group ranks 2-3 \\([^)]*\\): plan test 1 \\(sendrecv float32, split:2\\): busbw" \
	"what no node explains follows as a # line"

# a floor nobody reaches, on one host: the host is the culprit; --drain
# runs a real scontrol that finds no controller
FLOOR="$TMPD/floor.yaml"
cat >"$FLOOR" <<'EOF'
name: floor
defaults: {dtype: float32, min_bytes: 64K, max_bytes: 64K, iters: 3,
           warmup: 1, in_place: false}
tests:
  - {op: all_reduce, expect: {busbw: 100000}}
EOF
if command -v scontrol >/dev/null; then
	SLURM_CONF=$TMPD/no-such-slurm.conf run -t 120 $SHAKEDOWN run \
		--no-progress --local 2 --plan "$FLOOR" --db "$DB" --drain
	is "$rc" 6 "an impossible floor: exit 6, --drain or not"
	host=$(q "SELECT hostname FROM runs ORDER BY id DESC LIMIT 1")
	like "$err" "could not drain $host: scontrol said: .*; the results are recorded; as a Slurm operator run: scontrol update NodeName=$host State=DRAIN" \
		"--drain without a controller says so and what to run"
	run "$SHAKEDOWN" report --bad-nodes --db "$DB"
	is "$(printf '%s\n' "$out" | head -n 1)" "$host" \
		"the only host is named, and the run is recorded"
else
	skip 3 "scontrol is not installed (apt-get install slurm-client)"
fi

run -t 60 $S --baseline no-such-baseline
is "$rc" 2 "an unknown --baseline: exit 2"
like "$err" "--baseline no-such-baseline: no baseline 'no-such-baseline'; list the baselines with 'shakedown baseline list'" \
	"names it and how to list them"
run -t 60 $S --db none --baseline x
is "$rc" 2 "--baseline with --db none: exit 2"
done_testing
