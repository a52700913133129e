#!/bin/sh
# slurm_topo.t - `shakedown topo` under srun --mpi=pmi2 on the private
# cluster whose nodes have their own hostnames and network namespaces
# (test/system/slurm/netns.sh): one host per node with its two ranks, and
# each node's own eth0 with the address the cluster gave it; /sys there
# is the root namespace's, so the interfaces must come from the node's
# namespace, not from /sys/class/net.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
command -v jq >/dev/null 2>&1 || skip_all "needs jq (apt-get install jq)"
SD_SLURM_NETNS=1 sd_slurm_begin 3 6

out=$SD_TMP/topo.json
sd_srun --mpi=pmi2 -N 3 --ntasks-per-node=2 "$SHAKEDOWN" topo \
	--format json >"$out" 2>"$SD_TMP/topo.err"
rc=$?
is "$rc" 0 "topo on 3 nodes x 2 tasks (exit $rc)"
[ $rc = 0 ] || diag_file "$SD_TMP/topo.err"
ok 'jq -e . "$out" >/dev/null' "one JSON document"
is "$(jq -r '"\(.nranks) \(.nhosts) \(.launcher)"' "$out")" "6 3 srun" \
	"6 ranks on 3 hosts, launched by srun"
is "$(jq -r '.hosts[] | "\(.host):\([.ranks[].rank] | map(tostring) | join(","))"' "$out" | tr '\n' ' ')" \
	"node1:0,1 node2:2,3 node3:4,5 " "each node with its two ranks"
is "$(jq -r '.hosts[] | [.interfaces[].name] | join(",")' "$out" | tr '\n' ' ')" \
	"eth0 eth0 eth0 " "each node has its own eth0 only"
is "$(jq -r '.hosts[] | "\(.interfaces[0].ipv4[0]) \(.interfaces[0].state)"' "$out" | tr '\n' ' ')" \
	"$(sd_cluster_node_addr 1) up $(sd_cluster_node_addr 2) up $(sd_cluster_node_addr 3) up " \
	"with the address the cluster gave that node, up"
done_testing
