#!/bin/sh
# run_variants.t - a test of another path (a plan's transport, iface or
# process_env) runs in a worker process per rank started with that path's
# settings, and its results land in the same run as tests of their own:
#   - a plan with an in-process test, a tcp/lo variant and a process_env
#     variant: all pass and are recorded in one run
#   - the settings reach the worker and only it: a process_env naming an
#     interface that does not exist fails that test alone, with Gloo's own
#     words from the worker, after the tests before it were recorded
#   - a worker killed mid-test is named with its rank, host and variant;
#     a stalled one ends the run within the timeout, naming its rank
#   - what a backend cannot take is refused before the run (exit 2)
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
command -v python3 >/dev/null || skip_all "python3 missing (reads the report document)"

DB=$TMPD/v.db
cat >"$TMPD/variants.yaml" <<'PLAN'
name: variants
defaults: {min_bytes: 1K, max_bytes: 16K, iters: 3, warmup: 1}
tests:
  - {op: all_reduce}
  - {op: all_reduce, transport: tcp, iface: lo}
  - {op: [all_gather, sendrecv], scope: "split:2",
     process_env: {SHAKEDOWN_TEST_VARIANT: b}}
PLAN
run -t 120 "$SHAKEDOWN" run --local 4 --plan "$TMPD/variants.yaml" --db "$DB" \
	--no-progress
is "$rc" 0 "in-process and worker tests in one run: exit 0"
is "$(sqlite3 "$DB" "SELECT group_concat(number || ':' || name || ':' ||
	verdict, ' ') FROM (SELECT number, name, verdict FROM tests_v
	ORDER BY test_index)")" \
	"1:all_reduce:passed 2:all_reduce:passed 3:all_gather:passed 3:all_gather:passed 4:sendrecv:passed 4:sendrecv:passed" \
	"every test of both variants is recorded in the one run, checked"
is "$(sqlite3 "$DB" "SELECT count(*) FROM measurements m JOIN tests t
	ON t.id = m.test_id WHERE t.plan_test = 2 AND m.checked = 1
	AND m.wrong = 0")" 6 \
	"the tcp/lo variant measured every size both ways, each checked"
is "$(sqlite3 "$DB" "SELECT group_concat(number || ':' || coalesce(variant,
	'-'), ' ') FROM (SELECT number, variant FROM tests_v ORDER BY
	test_index)")" "1:- 2:tcp lo 3:process_env 3:process_env 4:process_env 4:process_env" \
	"each test's path is recorded (tests.variant)"
like "$("$SHAKEDOWN" report --db "$DB")" "^2 +1 +all_reduce +float32 +sum +- +world +0-3 .* passed +- +tcp lo$" \
	"report's tests name the path"
is "$("$SHAKEDOWN" report --db "$DB" --format json | python3 -c '
import json, sys
print(" ".join(str(t["variant"]) for t in json.load(sys.stdin)["tests"]))')" \
	"None tcp lo process_env process_env process_env process_env" \
	"and so does the report document"
like "$out" "# Test 2: all_reduce float32 sum via tcp lo, 4 ranks" \
	"the run's output heads the test with its path"
"$SHAKEDOWN" report --db "$DB" --format html -o "$TMPD/v.html"
like "$(cat "$TMPD/v.html")" "<h3>test 2: all_reduce float32 sum, scope world, via tcp lo," \
	"and the HTML page"
like "$(sqlite3 "$DB" "SELECT plan_text FROM runs")" \
	"scope: world, transport: tcp, iface: lo\\}" \
	"the run's plan records the tcp variant"
like "$(sqlite3 "$DB" "SELECT plan_text FROM runs")" \
	"scope: split:2, process_env: \\{SHAKEDOWN_TEST_VARIANT: b\\}\\}" \
	"and the process_env one"

# the settings are the worker's alone: the rank's own Gloo (test 1) binds
# the job's interface, the worker's the one its process_env names
cat >"$TMPD/badif.yaml" <<'PLAN'
name: badif
defaults: {op: all_reduce, min_bytes: 1K, max_bytes: 4K, iters: 3, warmup: 1}
tests:
  - {op: all_reduce}
  - {op: all_reduce, process_env: {SHAKEDOWN_GLOO_IFACE: nosuch0}}
PLAN
run -t 120 "$SHAKEDOWN" run --local 2 --plan "$TMPD/badif.yaml" --db "$DB" \
	--no-progress
ok '[ "$rc" != 0 ]' "an interface that does not exist, in the worker only: the run fails (exit $rc)"
like "$err$out" "setting up test 2 \\(all_reduce\\): creating the communicator in the test's worker process: gloo: network interface 'nosuch0' has no IPv4 address" \
	"with Gloo's words from the worker, for test 2"
is "$(sqlite3 "$DB" "SELECT verdict FROM tests_v t JOIN runs r ON r.id =
	t.run_id WHERE r.id = (SELECT max(id) FROM runs) AND t.number = 1")" \
	passed "test 1, in the rank's own process, passed and is recorded"

# a worker killed mid-test: its rank, host and variant named
SHAKEDOWN_FAULT=rank=1,kind=kill,op=all_gather run -t 120 "$SHAKEDOWN" run \
	--local 4 --plan "$TMPD/variants.yaml" --db "$DB" --no-progress -T 10
is "$rc" 3 "a killed worker: exit 3 (its rank's backend failed)"
like "$err$out" "rank 1 \\([^)]*pid [0-9]+\\) in group 0 \\(ranks 0-1\\) failed in all_gather .*: the process_env worker process of rank 1 \\([^)]*\\) was killed by signal 9" \
	"the rank, its host and the variant are named"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests t WHERE t.run_id = (SELECT
	max(id) FROM runs) AND t.plan_test IN (1, 2) AND t.status = 'passed'")" \
	2 "the tests before it are recorded"

# a slow rank in a worker: judged and blamed as any test, the reason
# naming the path
cat >"$TMPD/slow.yaml" <<'PLAN'
name: slow
defaults: {min_bytes: 1K, max_bytes: 16K, iters: 5, warmup: 1,
           expect: {peers: 0.5}, retries: 1}
tests:
  - {op: all_reduce, scope: "split:2", transport: tcp, iface: lo}
PLAN
SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=20000 run -t 120 "$SHAKEDOWN" run \
	--local 4 --plan "$TMPD/slow.yaml" --db "$DB" --no-progress
is "$rc" 6 "a slow rank in a worker's group: exit 6 (the fault acts in the worker)"
like "$("$SHAKEDOWN" report --bad-nodes --db "$DB")" \
	"group ranks 0-1 \\([^)]*\\): plan test 1 \\(all_reduce float32, split:2, tcp lo\\): busbw " \
	"the reason names the test's path"

# a stalled worker: the run ends within the timeout, the rank named
SHAKEDOWN_FAULT=rank=2,kind=stall,op=all_gather run -t 120 "$SHAKEDOWN" run \
	--local 4 --plan "$TMPD/variants.yaml" --db none --no-progress -T 4
is "$rc" 4 "a stalled worker: exit 4"
like "$err$out" "rank 2 \\([^)]*pid [0-9]+\\) in group 1 \\(ranks 2-3\\) did not complete all_gather" \
	"the stalled worker's rank is named"
ok "awk 'BEGIN { exit !($secs < 40) }'" "within the timeout and a margin (${secs} s)"
sleep 1
# a worker left behind has lost its rank: its parent is no longer a
# shakedown process (other tests' workers, under make -j, still have theirs)
orphans() {
	for p in $(pgrep -f 'shakedown worker --fd'); do
		pp=$(ps -o ppid= -p "$p" | tr -d ' ')
		[ -n "$pp" ] && ! ps -o args= -p "$pp" | grep -q shakedown &&
			echo "$p"
	done
}
ok "[ -z \"\$(orphans)\" ]" "no worker process is left"

# refused before the run
printf 'name: x\ntests:\n  - {op: all_reduce, transport: nvlink}\n' >"$TMPD/nv.yaml"
run -t 60 "$SHAKEDOWN" run --local 2 --plan "$TMPD/nv.yaml" --db none --no-progress
is "$rc" 2 "gloo with transport nvlink: exit 2"
like "$err" "gloo moves bytes over tcp only; transport nvlink is for nccl" \
	"says why and what to use"
printf 'name: x\ntests:\n  - {op: all_reduce, transport: tpc}\n' >"$TMPD/tpc.yaml"
run -t 60 "$SHAKEDOWN" plan check "$TMPD/tpc.yaml"
is "$rc" 2 "an unknown transport: exit 2"
like "$err" "transport 'tpc' is not one plans know; did you mean 'tcp'\\?" \
	"with the closest name"
printf 'name: x\ntests:\n  - {op: all_reduce, process_env: {9X: 1}}\n' >"$TMPD/pe.yaml"
run -t 60 "$SHAKEDOWN" plan check "$TMPD/pe.yaml"
is "$rc" 2 "a bad process_env name: exit 2"
like "$err" "process_env: '9X' is not a variable name" "names it"

done_testing
