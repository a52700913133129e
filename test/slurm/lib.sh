# lib.sh - TAP helpers for the tests that run against a private Slurm
# cluster (test/slurm_*.t).  Sourced after test/slurm/cluster.sh.
#
#   sd_slurm_begin NODES PLAN   start the cluster, print the plan line, or
#                               print "1..0 # SKIP reason" and exit 0
#   ok COND_RC NAME             one TAP line from an exit status
#   sd_srun ARGS...             srun with -K, a time limit and a timeout
#   sd_show FILE                a file as TAP comments

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
	. "${top_srcdir:-.}/test/slurm/cluster.sh"
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
		sd_cluster_stop
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
