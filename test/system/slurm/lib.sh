# lib.sh - TAP helpers for the tests that run against a private Slurm
# cluster (test/slurm_*.t).  Sourced after test/system/slurm/cluster.sh.
#
#   sd_slurm_begin NODES PLAN   start the cluster, print the plan line, or
#                               print "1..0 # SKIP reason" and exit 0
#   ok COND_RC NAME             one TAP line from an exit status
#   sd_srun ARGS...             srun with -K, a time limit and a timeout
#   sd_show FILE                a file as TAP comments

top_srcdir=$(cd "${top_srcdir:-.}" && pwd)
top_builddir=$(cd "${top_builddir:-.}" && pwd)
sd_test_no=0
sd_failed=0

ok() {
	sd_test_no=$((sd_test_no + 1))
	if [ "$1" = 0 ]; then
		echo "ok $sd_test_no - $2"
	else
		echo "not ok $sd_test_no - $2"
		sd_failed=1
	fi
}

skip() {
	sd_test_no=$((sd_test_no + 1))
	echo "ok $sd_test_no # SKIP $1"
}

sd_show() {
	sed 's/^/# /' "$1"
}

sd_slurm_begin() {
	. "$top_srcdir/test/system/slurm/cluster.sh"
	if [ -n "${SD_SLURM_NETNS:-}" ]; then
		# Nodes in their own network namespaces (netns.sh); the trap
		# removes the namespaces after the daemons are gone.
		. "$top_srcdir/test/system/slurm/netns.sh"
		SD_CLUSTER_NO_TRAP=1
		trap 'sd_cluster_stop; sd_netns_destroy' EXIT
		trap 'exit 130' INT TERM
		SD_CLUSTER_SKIP=$(sd_cluster_why_not)
		if [ -z "$SD_CLUSTER_SKIP" ] && ! sd_netns_create "$1"; then
			echo "1..0 # SKIP $SD_CLUSTER_SKIP"
			exit 0
		fi
	fi
	sd_cluster_start "$1"
	case $? in
	0) ;;
	1)
		echo "1..0 # SKIP $SD_CLUSTER_SKIP"
		exit 0
		;;
	*)
		echo "1..0 # SKIP the private Slurm cluster did not start" \
		     "(see the log above)"
		exit 0
		;;
	esac
	echo "1..$2"
	SD_TMP=$SD_CLUSTER_DIR/test
	mkdir -p "$SD_TMP"
}

# srun inside a timeout; -K kills the step when a task fails.
sd_srun() {
	timeout 120 $SD_CLUSTER_CLIENT srun -K -t 2 "$@"
}

sd_slurm_end() {
	exit "$sd_failed"
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
	if [ ! -x "${SHAKEDOWN:-}" ]; then
		echo "1..0 # SKIP src/shakedown not built"
		exit 0
	fi
	if ! sd_have_gloo; then
		echo "1..0 # SKIP the Gloo plugin is not built" \
		     "(plugins/gloo; it needs libgloo-dev)"
		exit 0
	fi
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
