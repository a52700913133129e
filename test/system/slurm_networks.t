#!/bin/sh
# slurm_networks.t - a cluster with two networks tested in one run: four
# nodes in their own network namespaces, each with eth0 on one bridge and
# eth1 on another (test/system/slurm/netns.sh, SD_NETNS_SECOND), every
# link shaped by tc tbf.  A plan with two transport variants, node pairs
# over eth0 and node pairs over eth1 (each in worker processes bound to
# its interface, lib/worker.h):
#   - healthy: both variants pass in one run, each recorded with its path,
#     and each interface's token bucket counted the variant's bytes
#   - the proof of the path: each node pair's path verdict read from the
#     kernel's socket table of its workers (lib/path_proof.h): every TCP
#     connection on the interface asked for
#   - node3's eth1 ten times slower: the eth1 variant's node pairs through
#     node3 fail and node3 is named for eth1 only; every eth0 pair passes
#   - bytes astray: a test that asks for eth1 while its process_env binds
#     its workers to eth0 fails its path verdict, naming eth0
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"
command -v tc >/dev/null || skip_all "tc is needed to shape traffic (apt-get install iproute2)"
SD_NETNS_SECOND=1 SD_SLURM_NETNS=1 sd_slurm_begin 4 17
NS=$SD_CLUSTER_NETNS_PREFIX
DB=$SD_TMP/n.db
PLAN=$SD_TMP/networks.yaml
cat >"$PLAN" <<'YAML'
name: networks
defaults:
  dtype: float32
  min_bytes: 256K
  max_bytes: 1M
  step_factor: 4
  iters: 3
  warmup: 1
  timeout: 30
  in_place: false
  expect: {peers: 0.5, at: 1M}
  retries: 1
tests:
  - {op: all_reduce, scope: node-pairs, transport: tcp, iface: eth0}
  - {op: all_reduce, scope: node-pairs, transport: tcp, iface: eth1}
YAML
# shape NODE DEV MBIT: the node's egress on DEV through a token bucket
shape() {
	ip netns exec "$NS-n$1" tc qdisc replace dev "$2" root tbf \
		rate "$3mbit" burst 64kb latency 400ms
}
# sent NODE DEV: the bytes the node's token bucket on DEV passed
sent() {
	ip netns exec "$NS-n$1" tc -s qdisc show dev "$2" |
		awk '$1 == "Sent" { print $2; exit }'
}
run_plan() {
	timeout 150 $SD_CLUSTER_CLIENT srun -K -t 3 --mpi=pmi2 -N 4 -n 4 \
		"$SHAKEDOWN" run --backend gloo --plan "$PLAN" --db "$DB" \
		--no-progress >"$SD_TMP/$1" 2>&1
	rc=$?
}
for n in 1 2 3 4; do
	shape "$n" eth0 400 && shape "$n" eth1 400 ||
		bail_out "tc tbf failed in node$n's namespace"
done
e0=$(sent 1 eth0)
e1=$(sent 1 eth1)

# --- healthy ------------------------------------------------------------------
run_plan healthy
is "$rc" 0 "two networks, both healthy: exit 0"
[ "$rc" = 0 ] || diag_file "$SD_TMP/healthy" | tail -n 30
is "$(sqlite3 "$DB" "SELECT group_concat(v, ' ') FROM (SELECT DISTINCT
	number || ':' || variant AS v FROM tests_v ORDER BY test_index)")" \
	"1:tcp eth0 2:tcp eth1" "each variant's tests recorded with its path"
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts WHERE subject_kind =
	'node-pair' AND expectation = 'peers' AND status = 'passed'")" 12 \
	"every node pair passed on both networks (2 x 6)"
is "$(sqlite3 "$DB" "SELECT group_concat(x, ' ') FROM (SELECT DISTINCT
	t.variant || ':' || v.status AS x FROM verdicts v JOIN tests t ON
	t.id = v.test_id WHERE v.expectation = 'path' ORDER BY x)")" \
	"tcp eth0:passed tcp eth1:passed" \
	"every node pair's path verdict passed, on both networks"
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts WHERE expectation =
	'path' AND status = 'passed' AND measured = threshold AND measured > 0
	AND unit = 'connections'")" 12 \
	"12 path verdicts (2 x 6 pairs), each counting its connections"
like "$(sqlite3 "$DB" "SELECT v.reason FROM verdicts v JOIN tests t ON
	t.id = v.test_id WHERE v.expectation = 'path' AND t.variant =
	'tcp eth1' LIMIT 1")" "^[0-9]+ of [0-9]+ TCP connections over eth1\$" \
	"the reason: the workers' connections, all over eth1"
# node1 is in 3 pairs per network, each at 256K and 1M with a warm-up, 3
# timed runs and a check: megabytes on eth1 (the slow run below shows the
# eth0 variant's bytes did not take eth1: slowing eth1 leaves it alone)
d1=$(( $(sent 1 eth1) - e1 ))
ok "[ $d1 -gt 4000000 ]" "node1's eth1 carried the eth1 variant's bytes ($d1 B): its worker bound eth1"

# --- node3's eth1 ten times slower ----------------------------------------------
shape 3 eth1 40
run_plan slow
shape 3 eth1 400
is "$rc" 6 "node3's eth1 slow: exit 6"
[ "$rc" = 6 ] || diag_file "$SD_TMP/slow" | tail -n 30
uuid=$(sqlite3 "$DB" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
is "$(sqlite3 "$DB" "SELECT group_concat(x, ' ') FROM (SELECT DISTINCT
	t.variant || '/' || v.subject AS x FROM verdicts v JOIN tests t ON
	t.id = v.test_id JOIN runs r ON r.id = v.run_id WHERE r.uuid = '$uuid'
	AND v.subject_kind = 'node-pair' AND v.status = 'failed'
	ORDER BY x)")" \
	"tcp eth1/node1,node3 tcp eth1/node2,node3 tcp eth1/node3,node4" \
	"the eth1 node pairs through node3 failed, and only they"
bad=$("$SHAKEDOWN" report --bad-nodes --db "$DB")
is "$(printf '%s\n' "$bad" | head -n 1)" node3 "node3 is the bad node"
like "$(printf '%s\n' "$bad" | sed -n 2p)" \
	"^node3: node node3: 3 failed subjects; worst: plan test 2 \\(all_reduce float32, node-pairs, tcp eth1\\): node-pair " \
	"named for the eth1 variant"
unlike "$bad" "tcp eth0" "and nothing on eth0 is blamed"

# --- bytes astray: asked for eth1, bound to eth0 --------------------------------
cat >"$PLAN" <<'YAML'
name: astray
defaults: {dtype: float32, min_bytes: 64K, max_bytes: 64K, iters: 2,
           warmup: 1, timeout: 30}
tests:
  - {op: all_reduce, scope: node-pairs, transport: tcp, iface: eth1,
     process_env: {SHAKEDOWN_GLOO_IFACE: eth0}}
YAML
run_plan astray
isnt "$rc" 0 "a test whose bytes went over eth0 while it asked for eth1: the run fails (exit $rc)"
uuid=$(sqlite3 "$DB" "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
is "$(sqlite3 "$DB" "SELECT count(*) || ' ' || sum(v.status = 'failed')
	FROM verdicts v JOIN runs r ON r.id = v.run_id WHERE r.uuid = '$uuid'
	AND v.expectation = 'path'")" "6 6" "each of the 6 node pairs failed its path verdict"
like "$(sqlite3 "$DB" "SELECT v.reason FROM verdicts v JOIN runs r ON
	r.id = v.run_id WHERE r.uuid = '$uuid' AND v.expectation = 'path'
	LIMIT 1")" \
	"^asked for tcp eth1, ([0-9]+) of \\1 TCP connections went over eth0 10\\.[0-9.]+ instead \\(first: rank [0-9] on node[1-4]\\)\$" \
	"the reason names the interface the bytes took"
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts v JOIN runs r ON
	r.id = v.run_id WHERE r.uuid = '$uuid' AND v.expectation = 'data' AND
	v.status = 'passed'")" 6 "the data itself was right: only the path failed"
like "$(cat "$SD_TMP/astray")" "asked for tcp eth1" "the run's output says so"
done_testing
