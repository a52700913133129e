#!/bin/sh
# bench/error_rates.sh - how often shakedown blames a healthy node, and how
# often it names a slow one.  Starts a private Slurm cluster of NODES nodes
# in network namespaces (the test suite's test/system/slurm/), one rank per
# node, every node's link shaped by tc tbf to RATE; runs the CPU variant of
# the shipped quick plan (its tests, expectations and retries; sizes for a
# CPU and RATE) HEALTHY times, then with one node's link RATE x (1 - X) for
# X = 50%, 30%, 20% and 10%, SLOWED times each, interleaved in rounds;
# after each run reads `report --bad-nodes`.  ERROR_RATES_OUT=FILE keeps
# the per-run lines (case, slowed node, named, other named, exit status).
# Prints the plan, then per case the runs, how many named the slowed node, how many named another node, with 95%
# Clopper-Pearson intervals, and the machine's load.  Needs root (network
# namespaces), slurmctld, slurmd, munge and tc.  Run from the build tree:
#   sh bench/error_rates.sh [HEALTHY] [SLOWED] [NODES] [RATE_MBIT]
# (ERROR_RATES_PLAN, ERROR_RATES_PEERS, ERROR_RATES_NO_NODE_TEST,
# ERROR_RATES_OUT and ERROR_RATES_DB: below)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
top_srcdir=$top
top_builddir=$top
H=${1:-50}
S=${2:-20}
NODES=${3:-4}
RATE=${4:-200}
. "$top/test/system/lib.sh"
. "$top/test/system/slurm/cluster.sh"
. "$top/test/system/slurm/netns.sh"
SD_CLUSTER_NO_TRAP=1
at_exit 'sd_cluster_stop; sd_netns_destroy'
SD_CLUSTER_SKIP=$(sd_cluster_why_not)
[ -z "$SD_CLUSTER_SKIP" ] && sd_netns_create "$NODES" ||
	{ echo "error_rates.sh: no cluster: $SD_CLUSTER_SKIP" >&2; exit 3; }
sd_cluster_start "$NODES" || { echo "error_rates.sh: the cluster did not start" >&2; exit 3; }
NS=$SD_CLUSTER_NETNS_PREFIX
DB=$TMPD/rates.db
PLAN=$TMPD/quick-cpu.yaml
# ERROR_RATES_PLAN=quick (default) or acceptance: the shipped plan's CPU
# variant, its tests, expectations and retries at CPU sizes (64K to 1M:
# Gloo over the shaped links; one rank per node, so no GPU pairs or rails;
# no baseline is stored, so acceptance's baseline expectation is left out)
case ${ERROR_RATES_PLAN:-quick} in
quick) cat >"$PLAN" <<'YAML'
name: quick-cpu
defaults:
  dtype: float32
  redop: sum
  min_bytes: 64K
  max_bytes: 1M
  step_factor: 16
  iters: 5
  warmup: 2
  timeout: 60
  expect: {peers: 0.9}
  retries: 1
tests:
  - {op: [all_reduce, all_gather, reduce_scatter]}
  - {op: all_reduce, scope: node}
  - {op: all_reduce, scope: node-pairs, min_bytes: 1M}
YAML
;;
acceptance) cat >"$PLAN" <<'YAML'
name: acceptance-cpu
defaults:
  dtype: float32
  redop: sum
  min_bytes: 64K
  max_bytes: 1M
  step_factor: 16
  iters: 5
  warmup: 2
  timeout: 60
  expect: {peers: 0.85, mad: 6}
  retries: 2
tests:
  - op: [all_reduce, all_gather, reduce_scatter, all_to_all, broadcast,
         reduce, sendrecv]
  - {op: [all_reduce, all_gather, reduce_scatter], scope: node}
  - {op: [all_reduce, sendrecv], scope: node-pairs, min_bytes: 1M}
YAML
;;
*) echo "error_rates.sh: ERROR_RATES_PLAN is quick or acceptance" >&2; exit 2 ;;
esac
# ERROR_RATES_PEERS=F: the plan's peers factor instead of its own
if [ -n "${ERROR_RATES_PEERS:-}" ]; then
	sed "s/expect: {peers: [0-9.]*/expect: {peers: $ERROR_RATES_PEERS/" \
		"$PLAN" >"$PLAN.tmp" && mv "$PLAN.tmp" "$PLAN"
fi
# ERROR_RATES_NO_NODE_TEST=1: without the node test, whose one rank per
# node shares this machine's cores with every other node's (noise no
# cluster has), to measure the network's verdicts alone
if [ -n "${ERROR_RATES_NO_NODE_TEST:-}" ]; then
	grep -v 'scope: node}$' "$PLAN" >"$PLAN.tmp" && mv "$PLAN.tmp" "$PLAN"
fi
# shape NODE PERCENT_OF_RATE: node's egress at RATE x PERCENT / 100
shape() {
	ip netns exec "$NS-n$1" tc qdisc replace dev eth0 root tbf \
		rate "$(($RATE * $2 / 100))mbit" burst 64kb latency 400ms
}
healthy_links() {
	k=1
	while [ "$k" -le "$NODES" ]; do
		shape "$k" 100 || { echo "error_rates.sh: tc tbf failed" >&2; exit 3; }
		k=$((k + 1))
	done
}
# one CASE (healthy, or the slowdown in percent): its verdict as
# "CASE SLOWNODE NAMED OTHER RC" (NAMED/OTHER 1 when the slowed node /
# another node is a bad node)
one() {
	what=$1
	healthy_links
	slow=-
	if [ "$what" != healthy ]; then
		n=$(( (RANDOM_N % NODES) + 1 ))
		RANDOM_N=$((RANDOM_N * 1103515245 + 12345))
		RANDOM_N=$(( (RANDOM_N / 65536) % 32768 ))
		slow=node$n
		shape "$n" $((100 - what))
	fi
	timeout 300 $SD_CLUSTER_CLIENT srun -K -t 5 --mpi=pmi2 -N "$NODES" \
		-n "$NODES" "$SHAKEDOWN" run --backend gloo --plan "$PLAN" \
		--db "$DB" --no-progress >"$TMPD/out" 2>&1
	rc=$?
	bad=$("$SHAKEDOWN" report --bad-nodes --db "$DB" | head -n 1)
	named=0 other=0
	for h in $(sinfo_expand "$bad"); do
		if [ "$h" = "$slow" ]; then named=1; else other=1; fi
	done
	echo "$what $slow $named $other $rc"
}
# node[1-2,4] -> node1 node2 node4 (the hostlist of at most NODES nodes)
sinfo_expand() {
	[ -n "$1" ] || return 0
	$SD_CLUSTER_CLIENT scontrol show hostnames "$1" 2>/dev/null
}
RANDOM_N=12345
echo "# $(uptime)"
sed 's/^/# /' "$PLAN"
echo "# $NODES nodes, one rank each, links $RATE Mbit/s (tc tbf); $H healthy runs, $S per slowdown"
results=$TMPD/results
: >"$results"
i=0
while [ "$i" -lt "$H" ] || [ "$i" -lt "$S" ]; do
	[ "$i" -lt "$H" ] && one healthy >>"$results"
	if [ "$i" -lt "$S" ]; then
		for x in 50 30 20 10; do
			one "$x" >>"$results"
		done
	fi
	i=$((i + 1))
done
healthy_links
echo "# $(uptime)"
cp "$results" "${ERROR_RATES_OUT:-/dev/null}" 2>/dev/null
# ERROR_RATES_DB=FILE keeps the runs (their verdicts and suspects say why
# a node was named)
[ -n "${ERROR_RATES_DB:-}" ] &&
	sqlite3 "$DB" "VACUUM INTO '$ERROR_RATES_DB'" 2>/dev/null
python3 - "$results" <<'PY'
import sys
from math import comb
def cdf(k, n, p):
    return sum(comb(n, i) * p**i * (1 - p)**(n - i) for i in range(k + 1))
def ci(k, n, a=0.05):
    def bis(f):
        lo, hi = 0.0, 1.0
        for _ in range(100):
            m = (lo + hi) / 2
            if f(m): hi = m
            else: lo = m
        return (lo + hi) / 2
    lo = 0.0 if k == 0 else bis(lambda p: 1 - cdf(k - 1, n, p) >= a / 2)
    hi = 1.0 if k == n else bis(lambda p: cdf(k, n, p) <= a / 2)
    return lo, hi
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("case       runs  named-slow (95% CI)         blamed-other (95% CI)      exits")
for case in ["healthy", "50", "30", "20", "10"]:
    r = [x for x in rows if x[0] == case]
    if not r: continue
    n = len(r)
    named = sum(int(x[2]) for x in r)
    other = sum(int(x[3]) for x in r)
    lo, hi = ci(named, n); lo2, hi2 = ci(other, n)
    ex = {}
    for x in r: ex[x[4]] = ex.get(x[4], 0) + 1
    label = case if case == "healthy" else "slow " + case + "%"
    nm = "-" if case == "healthy" else "%d (%.0f%%-%.0f%%)" % (named, 100*lo, 100*hi)
    print("%-10s %4d  %-26s %d (%.1f%%-%.1f%%)%s  %s" % (label, n, nm, other,
          100*lo2, 100*hi2, " " * 6, " ".join("%s:%d" % kv for kv in sorted(ex.items()))))
PY
