#!/bin/sh
# slurm_pmi2.t - the PMI2 bootstrap under real srun --mpi=pmi2: the probe
# (test/pmi2_probe.c) runs every bootstrap collective in four layouts of
# tasks on a private three-node cluster, and what it learnt about
# placement is compared with Slurm's layout.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"

PROBE=$top_builddir/test/system/pmi2_probe
[ -x "$PROBE" ] ||
	skip_all "built without PMI2 (apt-get install libpmi2-0-dev)"
sd_slurm_begin 3 19

# probe NAME EXPECT_NODELIST EXPECT_LOCAL_SIZES SRUN_ARGS...
probes=0
probe() {
	name=$1 nodelist=$2 sizes=$3
	shift 3
	probes=$((probes + 1))
	out=$SD_TMP/probe.$probes
	sd_srun --mpi=pmi2 "$@" "$PROBE" >"$out" 2>&1
	rc=$?
	ok '[ $rc = 0 ] && ! grep -q "^not ok" "$out" && grep -q "^ok 12 " "$out"' \
		"$name: every bootstrap collective (exit $rc)" ||
		diag_file "$out"
	ok 'grep -q "^# size=.* nodelist=$nodelist " "$out"' \
		"$name: node list is $nodelist"
	got=$(sed -n 's/^# rank=.* local_size=\([0-9]*\)$/\1/p' "$out" |
	      tr '\n' ' ')
	is "$got" "$sizes" "$name: local sizes per rank are '$sizes' (got '$got')"
}

# (a node still completing the job before may be passed over: any one
# node, any two)
probe "1 node x 4 tasks" 'node[1-3]' '4 4 4 4 ' -N 1 -n 4
probe "2 nodes x 2 tasks" 'node\[[1-3][-,][1-3]\]' '2 2 2 2 ' -N 2 --ntasks-per-node=2
probe "3 nodes x 1 task" 'node\[1-3\]' '1 1 1 ' -N 3 --ntasks-per-node=1
probe "5 tasks on 3 nodes" 'node\[1-3\]' '3 3 3 1 1 ' -N 3 -n 5
probe "6 tasks cyclic on 3 nodes" 'node\[1-3\]' '2 2 2 2 2 2 ' -N 3 \
	--ntasks-per-node=2 -m cyclic

# The command's own start-up checks under srun (no backend needed).
if [ -x "${SHAKEDOWN:-}" ]; then
	out=$SD_TMP/mpi-none
	# without -K: with it srun may SIGTERM the second task before that
	# task has even started, and report 143 instead of the tasks' 3
	timeout 120 $SD_CLUSTER_CLIENT srun -t 2 --mpi=none -N 2 -n 2 \
		"$SHAKEDOWN" run --db none >"$out" 2>&1
	rc=$?
	is "$rc" 3 "srun --mpi=none: exit 3 (got $rc)"
	hint="use 'srun --mpi=pmi2' or set MpiDefault=pmi2"
	ok 'grep -q "$hint" "$out"' \
		"srun --mpi=none: says to use srun --mpi=pmi2"
	[ $rc = 3 ] || diag_file "$out"

	# Rank 2 alone asks for other sizes: the option hash differs.
	out=$SD_TMP/disagree
	sd_srun --mpi=pmi2 -N 3 -n 3 sh -c 'if [ "$SLURM_PROCID" = 2 ];
		then exec "$0" run --db none -e 2K; else exec "$0" run \
		--db none -e 1K; fi' "$SHAKEDOWN" >"$out" 2>&1
	rc=$?
	is "$rc" 2 "ranks started with different options: exit 2 (got $rc)"
	ok 'grep -q "ranks disagree.*rank 2 has" "$out"' \
		"ranks started with different options: rank 2 is named"
	[ $rc = 2 ] || diag_file "$out"
else
	skip 4 "src/shakedown not built"
fi
done_testing
