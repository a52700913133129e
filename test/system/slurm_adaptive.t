#!/bin/sh
# slurm_adaptive.t - adaptive node pairs (scope node-pairs:adaptive, issue
# 30) on a real cluster: seven nodes in their own network namespaces
# (test/system/slurm/netns.sh), one rank each, Gloo over TCP.  Faults are
# planted for real:
#   - nothing planted: exit 0, no node named, every node met 2 partners in
#     2 matchings and one round for the node left out of each
#   - a slow node (SHAKEDOWN_FAULT kind=slow on one rank): that node is
#     named and only it, and the reason says how many rounds it took
#   - a slow link on one node (tc tbf on its veth): that node is named
#   - a slow path between two healthy nodes (htb shaping only the traffic
#     between them; the plan's switches put them under one switch, so that
#     round 1 pairs them): named as a path, neither node blamed
#   - 2 and 3 nodes: every pair measured; a slow node of 2 cannot be
#     placed and is named as their path
# and the pairs and rounds read back with sqlite3.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"
command -v tc >/dev/null || skip_all "tc is needed to shape traffic (apt-get install iproute2)"
SD_SLURM_NETNS=1 sd_slurm_begin 7 29

PLAN=$SD_TMP/adaptive.yaml
# what is planted is 30 to 100 times slower; a busy machine's noise is
# not 10 times, three times in a row
cat >"$PLAN" <<'EOF'
name: adaptive
defaults: {dtype: float32, min_bytes: 1M, max_bytes: 1M, iters: 3,
           warmup: 1, timeout: 30, in_place: false,
           expect: {peers: 0.1}, retries: 2}
tests:
  - {op: sendrecv, scope: "node-pairs:adaptive:1", seed: 42}
EOF
DB=$SD_TMP/a.db
NS=$SD_CLUSTER_NETNS_PREFIX

# run NAME NODES [ENV=VALUE...]: a run of $PLAN on NODES nodes; its exit
# status in $rc, its output in $SD_TMP/NAME
run_plan() {
	name=$1
	nodes=$2
	shift 2
	# shellcheck disable=SC2086
	env "$@" SHAKEDOWN_SCONTROL=scontrol timeout 200 $SD_CLUSTER_CLIENT \
		srun -K -t 4 --mpi=pmi2 -N "$nodes" -n "$nodes" "$SHAKEDOWN" run \
		--backend gloo --plan "$PLAN" --db "$DB" --no-progress \
		>"$SD_TMP/$name" 2>&1
	rc=$?
	uuid=$(sqlite3 "$DB" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
}
bad_nodes() {
	"$SHAKEDOWN" report --bad-nodes --db "$DB" "$uuid"
}
# q SQL: a query on the latest run's tests (t) or verdicts (v)
q() {
	sqlite3 "$DB" "$1"
}
# the node pairs of the run's last attempts, one a line: "node1,node3"
pairs_of() {
	q "SELECT DISTINCT v.subject FROM verdicts v JOIN runs r ON r.id =
		v.run_id WHERE r.uuid = '$uuid' AND v.expectation = 'peers'
		ORDER BY v.subject"
}

# --- healthy -------------------------------------------------------------------
run_plan healthy 7
is "$rc" 0 "7 healthy nodes: exit 0"
[ "$rc" = 0 ] || diag_file "$SD_TMP/healthy" | tail -n 30
is "$(bad_nodes | head -n 1)" "" "no node is named"
is "$(bad_nodes | wc -l | tr -d ' ')" 1 "and nothing else"
# every node met at least two partners
short=$(pairs_of | tr ',' '\n' | sort | uniq -c | awk '$1 < 2' | wc -l)
is "$short" 0 "every node met at least 2 partners"
like "$(q "SELECT group_concat(n, ' ') FROM (SELECT t.round || ':' ||
	t.pairing || ':' || count(*) AS n FROM tests t JOIN runs r ON r.id =
	t.run_id WHERE r.uuid = '$uuid' GROUP BY t.round, t.pairing ORDER BY
	t.round)")" "^1:disjoint:3 2:random:3 3:fill:[12]$" \
	"tests.round and tests.pairing: 3 disjoint pairs, 3 more, then the nodes left out meet one or two more"
is "$(q "SELECT DISTINCT t.seed FROM tests t JOIN runs r ON r.id = t.run_id
	WHERE r.uuid = '$uuid'")" "0x000000000000002a" \
	"tests.seed records the plan's seed (42)"
healthy_pairs=$(pairs_of | tr '\n' ' ')
# shakedown-db(5)'s one-liner (EXAMPLES): the rounds of the latest run
readme_q=$(sed -n 's/^sqlite3 \\-header \\-column shakedown.db "\(.*round IS NOT NULL.*\)"$/\1/p' \
	"$top_srcdir/man/shakedown-db.5.in")
ok '[ -n "$readme_q" ]' "shakedown-db(5) has its one-liner for the rounds"
is "$(sqlite3 -list -separator '|' "$DB" "$readme_q" | cut -d'|' -f2,3,4,6 | sort -u | tr '\n' ' ')" \
	"1|disjoint|1|passed 2|random|1|passed 3|fill|1|passed " \
	"which reads back each round, its pairing, attempt and verdict"

# the same seed, the same pairs
run_plan again 7
is "$(pairs_of | tr '\n' ' ')" "$healthy_pairs" \
	"the same seed on the same nodes: the same pairs ($healthy_pairs)"

# --- a slow node ---------------------------------------------------------------
run_plan slow 7 SHAKEDOWN_FAULT=rank=4,kind=slow,delay_us=60000
is "$rc" 6 "a slow node: exit 6"
[ "$rc" = 6 ] || diag_file "$SD_TMP/slow" | tail -n 30
slow=$(q "SELECT k.host FROM ranks k JOIN runs r ON r.id = k.run_id
	WHERE r.uuid = '$uuid' AND k.rank = 4")
is "$(bad_nodes | head -n 1)" "$slow" "it is named: $slow"
is "$(bad_nodes | wc -l | tr -d ' ')" 2 "and nothing else"
like "$(bad_nodes | sed -n 2p)" \
	"node-pairs:adaptive:1, [2-9] rounds of adaptive pairing\\): every node pair it was in failed \\([2-9] of [2-9]\\)" \
	"the reason says how many rounds of adaptive pairing it took"
is "$(q "SELECT count(*) FROM verdicts v JOIN runs r ON r.id = v.run_id
	WHERE r.uuid = '$uuid' AND v.status = 'failed' AND
	instr(v.subject, '$slow') = 0")" 0 "no pair without $slow failed"

# --- a slow link on one node: every packet of node5 through a token bucket ----
if ip netns exec "$NS-n5" tc qdisc add dev eth0 root tbf rate 40mbit \
	burst 64kbit latency 500ms; then
	run_plan link 7
	ip netns exec "$NS-n5" tc qdisc del dev eth0 root
	is "$rc" 6 "a slow link on node5: exit 6"
	[ "$rc" = 6 ] || diag_file "$SD_TMP/link" | tail -n 30
	is "$(bad_nodes | head -n 1)" node5 "node5 is named"
	is "$(bad_nodes | wc -l | tr -d ' ')" 2 "and nothing else"
else
	skip 3 "tbf is not available in this kernel"
fi

# --- a slow path between node1 and node3, under one switch --------------------
PLAN_SAVED=$PLAN
PLAN=$SD_TMP/switches.yaml
{
	echo 'switches: {s0: "node[1,3]", s1: "node[2,4-7]"}'
	cat "$PLAN_SAVED"
} >"$PLAN"
if sd_shape_path "$NS-n1" "$(sd_cluster_node_addr 3)" 2>/dev/null &&
   sd_shape_path "$NS-n3" "$(sd_cluster_node_addr 1)" 2>/dev/null; then
	run_plan path 7
	ip netns exec "$NS-n1" tc qdisc del dev eth0 root
	ip netns exec "$NS-n3" tc qdisc del dev eth0 root
	is "$rc" 6 "a slow path between node1 and node3: exit 6"
	[ "$rc" = 6 ] || diag_file "$SD_TMP/path" | tail -n 30
	is "$(bad_nodes | head -n 1)" "" "no node is blamed"
	like "$(bad_nodes | sed -n 2p)" \
		"^# path node1,node3 \\(node\\[1,3\\]\\): .*both nodes pass with others: the network path" \
		"the path is named, with why"
	is "$(bad_nodes | wc -l | tr -d ' ')" 2 "and nothing else"
	# the pair's rows: its members are those of its verdict's test row
	like "$(q "SELECT group_concat(t.round || ':' || t.pairing || ':' ||
		t.attempt, ' ') FROM (SELECT t.* FROM tests t JOIN runs r ON
		r.id = t.run_id WHERE r.uuid = '$uuid' AND t.members = (SELECT
		t2.members FROM tests t2 JOIN verdicts v ON v.test_id =
		t2.id WHERE v.run_id = r.id AND v.subject = 'node1,node3' LIMIT 1) ORDER BY t.round)
		t")" "^1:disjoint:1 [0-9]+:retry:2 [0-9]+:retry:3\$" \
		"the switches put node1 and node3 together in round 1; the pair was measured again twice (tests.pairing retry)"
	is "$(q "SELECT max(v.attempts) FROM verdicts v JOIN runs r ON r.id =
		v.run_id WHERE r.uuid = '$uuid' AND v.subject = 'node1,node3'")" 3 \
		"the pair was measured 3 times (2 retries) before it was named"
else
	ip netns exec "$NS-n1" tc qdisc del dev eth0 root 2>/dev/null
	ip netns exec "$NS-n3" tc qdisc del dev eth0 root 2>/dev/null
	skip 6 "htb or the u32 filter is not available in this kernel"
fi
PLAN=$PLAN_SAVED

# --- 2 and 3 nodes ---------------------------------------------------------------
run_plan three 3
is "$rc" 0 "3 healthy nodes: exit 0"
is "$(pairs_of | wc -l | tr -d ' ')" 3 "all 3 pairs measured"
run_plan two 2
is "$rc" 0 "2 healthy nodes: exit 0"
is "$(pairs_of | wc -l | tr -d ' ')" 1 "the one pair measured"
run_plan two-slow 2 SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=60000
# one pair has no peers: judged by nothing relative, it passes; the data
# is right.  Two nodes cannot place a fault: nothing more to say
is "$rc" 0 "2 nodes, one slow: with one pair there are no peers to judge against (exit 0)"
like "$(q "SELECT v.status || ': ' || v.reason FROM verdicts v JOIN runs r
	ON r.id = v.run_id WHERE r.uuid = '$uuid' AND v.expectation =
	'peers'")" "^skipped: .*no peers to compare with" \
	"its peers verdict is skipped, saying why"
done_testing
