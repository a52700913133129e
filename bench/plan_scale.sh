#!/bin/sh
# bench/plan_scale.sh - how `shakedown plan expand` scales with the cluster
# on paper: wall time and peak memory (GNU time's maximum RSS) to expand
# plans/acceptance.yaml for 64 to 4,096 nodes of 8 ranks, three times each,
# with the machine's load.  Run from the build tree: sh bench/plan_scale.sh
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SHAKEDOWN=${SHAKEDOWN:-$top/src/shakedown}
PLAN=${1:-$top/plans/acceptance.yaml}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "plan_scale.sh: needs GNU time (apt-get install time)" >&2; exit 3; }
echo "# $(uptime)"
echo "# nodes ranks_per_node seconds max_rss_kb (3 runs each)"
for nodes in 64 256 1024 4096; do
	for i in 1 2 3; do
		$TIME -f "$nodes 8 %e %M" "$SHAKEDOWN" plan expand "$PLAN" \
			--nodes "$nodes" --ranks-per-node 8 2>&1 >/dev/null |
			tail -n 1
	done
done
