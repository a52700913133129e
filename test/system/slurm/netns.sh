# netns.sh - network namespaces for a cluster whose nodes have their own
# hostnames and addresses (sourced before test/system/slurm/cluster.sh).
#
# One namespace holds a bridge (10.77.0.1/24), the controller and the
# clients (srun, sbatch); each node gets a namespace with a veth on that
# bridge (node1 = 10.77.0.11, ...).  The addresses exist only inside these
# namespaces.  Node daemons also get their own UTS and mount namespaces
# (hostname nodeN, an /etc/hosts naming every node), as on a real cluster.
#
#   sd_netns_create NODES   0, or 1 with SD_CLUSTER_SKIP saying why not
#   sd_netns_destroy        delete what sd_netns_create made
#
# SD_NETNS_SECOND=1 gives the cluster a second network, as a cluster with
# two fabrics has: a second bridge (10.78.0.1/24) in the same namespace
# and an eth1 on it in each node (node1 = 10.78.0.11, ...); Slurm and the
# control plane stay on the first.

SD_NETNS_MADE=${SD_NETNS_MADE:-}

sd_netns_create() {
	nodes=$1
	SD_CLUSTER_NETNS_PREFIX=sd$$
	SD_NETNS_MADE=
	if ! command -v ip >/dev/null 2>&1 ||
	   ! command -v nsenter >/dev/null 2>&1 ||
	   ! command -v unshare >/dev/null 2>&1; then
		SD_CLUSTER_SKIP="needs ip, nsenter and unshare (apt-get install iproute2 util-linux)"
		return 1
	fi
	br=$SD_CLUSTER_NETNS_PREFIX-br
	if ! ip netns add "$br" 2>/dev/null; then
		SD_CLUSTER_SKIP="cannot create network namespaces here"
		return 1
	fi
	SD_NETNS_MADE=$br
	ip -n "$br" link set lo up &&
	ip -n "$br" link add sdbr0 type bridge &&
	ip -n "$br" addr add 10.77.0.1/24 dev sdbr0 &&
	ip -n "$br" link set sdbr0 up || {
		SD_CLUSTER_SKIP="cannot make a bridge in a network namespace"
		return 1
	}
	if [ -n "${SD_NETNS_SECOND:-}" ]; then
		ip -n "$br" link add sdbr1 type bridge &&
		ip -n "$br" addr add 10.78.0.1/24 dev sdbr1 &&
		ip -n "$br" link set sdbr1 up || {
			SD_CLUSTER_SKIP="cannot make a second bridge"
			return 1
		}
	fi
	i=1
	while [ "$i" -le "$nodes" ]; do
		ns=$SD_CLUSTER_NETNS_PREFIX-n$i
		ip netns add "$ns" || return 1
		SD_NETNS_MADE="$SD_NETNS_MADE $ns"
		# Names in the root namespace are unique per test process.
		ip link add "sdv$$.$i" type veth peer name "sdp$$.$i" &&
		ip link set "sdv$$.$i" netns "$br" &&
		ip link set "sdp$$.$i" netns "$ns" &&
		ip -n "$br" link set "sdv$$.$i" master sdbr0 up &&
		ip -n "$ns" link set lo up &&
		ip -n "$ns" link set "sdp$$.$i" name eth0 &&
		ip -n "$ns" addr add "$(sd_cluster_node_addr "$i")/24" \
			dev eth0 &&
		ip -n "$ns" link set eth0 up || {
			SD_CLUSTER_SKIP="cannot connect a veth to the bridge"
			return 1
		}
		if [ -n "${SD_NETNS_SECOND:-}" ]; then
			ip link add "sdw$$.$i" type veth peer name "sdq$$.$i" &&
			ip link set "sdw$$.$i" netns "$br" &&
			ip link set "sdq$$.$i" netns "$ns" &&
			ip -n "$br" link set "sdw$$.$i" master sdbr1 up &&
			ip -n "$ns" link set "sdq$$.$i" name eth1 &&
			ip -n "$ns" addr add "10.78.0.$((10 + i))/24" dev eth1 &&
			ip -n "$ns" link set eth1 up || {
				SD_CLUSTER_SKIP="cannot connect a second veth"
				return 1
			}
		fi
		i=$((i + 1))
	done
	SD_CLUSTER_NETNS=1
	SD_CLUSTER_CTL_ADDR=10.77.0.1
	SD_CLUSTER_CLIENT="nsenter --net=/run/netns/$br"
	return 0
}

sd_cluster_node_addr() {
	echo "10.77.0.$((10 + $1))"
}

sd_netns_destroy() {
	for ns in $SD_NETNS_MADE; do
		ip netns del "$ns" 2>/dev/null
	done
	SD_NETNS_MADE=
}
