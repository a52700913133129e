#!/bin/sh
# run_groups.t - a test may run on groups of the job's ranks: with scope
# split:2 on 4 local ranks the two pairs are measured at the same time on
# communicator splits, each recorded as its own test with its members; a
# hang in one group names that group's ranks and no rank of the other.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"

DB="$TMPD/groups.db"
S="$SHAKEDOWN run --no-progress --op all_reduce,broadcast -b 1K -e 64K -n 3 -w 1"

run -t 120 $S --local 4 --scope split:2 --db "$DB"
is "$rc" 0 "split:2 on 4 ranks: exit 0"
like "$out" "# Test 1: all_reduce float32 sum split:2 ranks 0-1, 2 ranks" \
	"the first group's test is named by its members"
like "$out" "# Test 1: all_reduce float32 sum split:2 ranks 2-3, 2 ranks" \
	"the second group's test is named by its members, under the same number"
like "$out" "# 4 subjects: 4 passed;" "two ops x two groups, all passed"
q() { sqlite3 -batch "$DB" "$1"; }
is "$(q "SELECT group_concat(op || ' ' || scope || ' ' || members || ' ' ||
	nranks || ' ' || status, '; ') FROM (SELECT * FROM tests ORDER BY
	test_index)")" \
	"all_reduce split:2 0-1 2 passed; all_reduce split:2 2-3 2 passed; broadcast split:2 0-1 2 passed; broadcast split:2 2-3 2 passed" \
	"each group recorded as a test with its members and size"
is "$(q "SELECT count(DISTINCT t.id) FROM tests t JOIN measurements m
	ON m.test_id = t.id")" 4 "every group test has measurements"
is "$(q "SELECT count(*) FROM measurements m JOIN tests t ON t.id =
	m.test_id WHERE t.op = 'all_reduce' AND m.algbw_gbs > 0 AND
	abs(m.busbw_gbs - m.algbw_gbs) > 1e-9 * m.algbw_gbs")" 0 \
	"busbw uses the group's size (all_reduce on 2 ranks: factor 1)"
is "$(q "SELECT sum(wrong) FROM measurements")" 0 "no wrong data in any group"
like "$(q "SELECT plan_text FROM runs")" "scope: split:2" \
	"the recorded plan holds the scope"
run -t 30 $SHAKEDOWN report --db "$DB" --format json
like "$out" '"members": ?"2-3"' "the report document carries the members"

# a planted stall in one group: that group's ranks are named
SHAKEDOWN_FAULT=rank=3,kind=stall,size=4K run -t 60 $S --local 4 \
	--scope split:2 --db none -T 3
is "$rc" 4 "a stalled rank in group 1: exit 4"
like "$err" "rank 3 \([^)]*pid [0-9]+\) in group 1 \(ranks 2-3\) did not complete all_reduce float32 sum 4K .* within 3 s; rank 2 gave up waiting" \
	"the stalled rank is named with its group, its partner as the one that waited"
unlike "$err" "rank [01] \([^)]*\)( in group 0 \(ranks 0-1\))? did not complete" \
	"no rank of the healthy group is blamed"
ok "awk 'BEGIN { exit !($secs < 25) }'" \
	"ended within the timeout plus a few seconds (${secs} s)"

# wrong data in one group: the rank is named by its world rank
SHAKEDOWN_FAULT=rank=3,kind=corrupt,size=4K,index=2 run -t 60 $S --local 4 \
	--scope split:2 --db "$TMPD/wrong.db"
is "$rc" 1 "a corrupted element in group 1: exit 1"
like "$out" "WRONG: out of place, 4096 bytes: rank 3: first wrong element at index 2" \
	"the wrong element's rank is the world rank"
is "$(sqlite3 -batch "$TMPD/wrong.db" "SELECT t.members || ':' ||
	m.first_wrong_rank FROM measurements m JOIN tests t ON t.id = m.test_id
	WHERE m.wrong > 0")" "2-3:3" "and so is the recorded one, in group 2-3"

# scopes that do not fit
run -t 30 $S --local 4 --scope split:3 --db none
is "$rc" 2 "split:3 on 4 ranks: exit 2"
like "$err" "scope split:3 needs a multiple of 3 ranks, the job has 4" \
	"says why"
run -t 30 $S --local 2 --scope galaxy --db none
is "$rc" 2 "an unknown scope: exit 2"
like "$err" "unknown scope 'galaxy'; use world, node, rail, gpu-pairs, node-pairs \(or node-pairs:ring, node-pairs:random:K, node-pairs:adaptive\[:K\] with K from 0 to 64; :one for one rank per node\), or split:K" \
	"names the scopes"

# node and rail follow the hosts: on one host, node is the whole job and
# rail a group per rank (a group too small for pt2pt is skipped and says so)
run -t 60 $S --local 3 --scope node --db "$TMPD/node.db"
is "$rc" 0 "node on one host: exit 0"
is "$(sqlite3 -batch "$TMPD/node.db" "SELECT group_concat(op || ':' ||
	members, ' ') FROM tests")" "all_reduce:0-2 broadcast:0-2" \
	"one group of every rank of the host"
run -t 60 $S --local 2 --scope rail --op all_reduce,pt2pt --db "$TMPD/rail.db"
is "$rc" 0 "rail on one host: exit 0"
is "$(sqlite3 -batch "$TMPD/rail.db" "SELECT group_concat(op || ':' ||
	members || ':' || status, ' ') FROM (SELECT * FROM tests ORDER BY
	test_index)")" \
	"all_reduce:0:passed all_reduce:1:passed pt2pt:0:skipped pt2pt:1:skipped" \
	"a group per local rank; pt2pt on a group of 1 is recorded as skipped"
like "$out" "skipped: a group of 1 rank is too small for pt2pt, which needs 2" \
	"and says why"

# gpu-pairs: every pair of ranks of the host once, in rounds where a rank
# plays at most once (3 ranks: 3 rounds, one rank idle in each)
run -t 60 $S --local 3 --scope gpu-pairs --op all_reduce --db "$TMPD/gp.db"
is "$rc" 0 "gpu-pairs on 3 ranks: exit 0"
is "$(sqlite3 -batch "$TMPD/gp.db" "SELECT group_concat(members, ' ') FROM
	(SELECT members FROM tests ORDER BY members)")" "0,2 0-1 1-2" \
	"each of the 3 pairs once"
# node-pairs on one host: nothing to pair, said as a skipped test
run -t 60 $S --local 2 --scope node-pairs --op all_reduce --db "$TMPD/np.db"
is "$rc" 0 "node-pairs on one host: exit 0"
is "$(sqlite3 -batch "$TMPD/np.db" "SELECT status || ': ' || message FROM
	tests")" "skipped: one host has no node pairs" "and says why"

# the shipped CPU plan runs on one host (node-pairs: nothing to pair)
run -t 120 $SHAKEDOWN run --no-progress --local 4 \
	--plan "$top_srcdir/plans/cpu.yaml" --db none
is "$rc" 0 "plans/cpu.yaml on 4 local ranks: exit 0"
like "$out" "# 13 subjects: 11 passed, 2 skipped; run passed" \
	"every test passes but the two node-pairs ones, skipped on one host"

# in a plan file, a test whose scope does not fit the job is skipped
cat >"$TMPD/plan.yaml" <<'YAML'
defaults: {min_bytes: 1K, max_bytes: 4K, iters: 2, warmup: 1}
tests:
  - {op: all_reduce, scope: split:2}
  - {op: all_gather, scope: split:3}
  - {op: broadcast}
YAML
run -t 60 $SHAKEDOWN run --no-progress --local 4 --plan "$TMPD/plan.yaml" \
	--db "$TMPD/plan.db"
is "$rc" 0 "a plan mixing scopes: exit 0"
is "$(sqlite3 -batch "$TMPD/plan.db" "SELECT group_concat(op || ':' ||
	scope || ':' || members, ' ') FROM (SELECT * FROM tests ORDER BY
	test_index)")" \
	"all_reduce:split:2:0-1 all_reduce:split:2:2-3 broadcast:world:0-3" \
	"split groups, the unfitting scope skipped, then the world"
done_testing
