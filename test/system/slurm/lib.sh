# lib.sh - the Slurm side of the tests that run against a private Slurm
# cluster (test/system/slurm_*.t): TAP comes from test/system/lib.sh, which
# this sources; the cluster from cluster.sh (and netns.sh).
#
#   sd_slurm_begin NODES PLAN   start the cluster and plan PLAN tests, or
#                               skip_all with the reason
#   sd_srun ARGS...             srun with -K, a time limit and a timeout
#   sd_need_shakedown_gloo      skip_all unless src/shakedown and Gloo are built
#   sd_check_json FILE OPS N    the rows of a --format json output are right
#   $SD_TMP                     a folder in the cluster's folder

. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=$(cd "$top_builddir" && pwd)

sd_slurm_begin() {
	. "$top_srcdir/test/system/slurm/cluster.sh"
	if [ -n "${SD_SLURM_NETNS:-}" ]; then
		# Nodes in their own network namespaces (netns.sh); the trap
		# removes the namespaces after the daemons are gone.
		. "$top_srcdir/test/system/slurm/netns.sh"
		SD_CLUSTER_NO_TRAP=1
		at_exit 'sd_cluster_stop; sd_netns_destroy'
		SD_CLUSTER_SKIP=$(sd_cluster_why_not)
		if [ -z "$SD_CLUSTER_SKIP" ] && ! sd_netns_create "$1"; then
			skip_all "$SD_CLUSTER_SKIP"
		fi
	fi
	sd_cluster_start "$1"
	case $? in
	0) ;;
	1)
		skip_all "$SD_CLUSTER_SKIP"
		;;
	*)
		skip_all "the private Slurm cluster did not start (see the log above)"
		;;
	esac
	plan "$2"
	SD_TMP=$SD_CLUSTER_DIR/test
	mkdir -p "$SD_TMP"
}

# srun inside a timeout; -K kills the step when a task fails.
sd_srun() {
	timeout 120 $SD_CLUSTER_CLIENT srun -K -t 2 "$@"
}

# Is the Gloo plugin built?  The shakedown runs need a backend.
sd_have_gloo() {
	old_ifs=$IFS
	IFS=:
	for dir in ${SHAKEDOWN_PLUGIN_DIR:-}; do
		if [ -f "$dir/backend_gloo.so" ]; then
			IFS=$old_ifs
			return 0
		fi
	done
	IFS=$old_ifs
	return 1
}

# Skip the whole file unless src/shakedown and the Gloo plugin are built.
sd_need_shakedown_gloo() {
	[ -x "${SHAKEDOWN:-}" ] || skip_all "src/shakedown not built"
	sd_have_gloo ||
		skip_all "the Gloo plugin is not built (plugins/gloo; it needs libgloo-dev)"
}

# sd_shape_path NS DST: in network namespace NS, traffic to address DST
# through a 40 mbit/s class and everything else at 10 gbit/s (htb and a u32
# filter): a slow path between two nodes that are fast with every other.
# Undo with: ip netns exec NS tc qdisc del dev eth0 root
sd_shape_path() {
	ip netns exec "$1" tc qdisc add dev eth0 root handle 1: htb default 10 &&
	ip netns exec "$1" tc class add dev eth0 parent 1: classid 1:10 htb \
		rate 10gbit &&
	ip netns exec "$1" tc class add dev eth0 parent 1: classid 1:20 htb \
		rate 40mbit &&
	ip netns exec "$1" tc filter add dev eth0 protocol ip parent 1: prio 1 \
		u32 match ip dst "$2/32" flowid 1:20
}

# Check a --format json output: every op in $2 (comma-separated) has rows,
# every row was checked and has wrong 0, every row has nranks $3.
# Prints the reason on failure.
sd_check_json() {
	file=$1 ops=$2 nranks=$3
	rows=$(grep -c '^{"run":' "$file")
	if [ "$rows" = 0 ]; then
		echo "# no JSON rows in $file"
		return 1
	fi
	for op in $(echo "$ops" | tr , ' '); do
		if ! grep -q "^{\"run\":.*\"op\":\"$op\"" "$file"; then
			echo "# no rows for $op"
			return 1
		fi
	done
	bad=$(grep '^{"run":' "$file" | grep -v '"checked":true,"wrong":0' |
	      head -n 3)
	if [ -n "$bad" ]; then
		echo "# rows with wrong data or unchecked: $bad"
		return 1
	fi
	bad=$(grep '^{"run":' "$file" | grep -v "\"nranks\":$nranks," |
	      head -n 1)
	if [ -n "$bad" ] && [ -n "$nranks" ]; then
		echo "# rows without nranks $nranks: $bad"
		return 1
	fi
	return 0
}
