#!/bin/sh
# slurm_oom.t - a rank on another node than rank 0's that the kernel's
# OOM killer takes is named as the OOM killer's victim, never as a bad
# node (issue 33), under srun --mpi=pmi2 on a private two-node cluster, 2
# ranks a node.  Rank 3 (node2, behind node2's leader, rank 2) runs in a
# memory cgroup of its own: 1 GiB while the memory check runs, 160M once
# the run has its row, which test 2's reduce_scatter (~256M a rank) does
# not fit.  Node2's leader read the OOM kills of rank 3's cgroup when rank
# 3 said hello and reads them again when it leaves; rank 0 names the
# victim with what the test needed, exits 3 (memory), records no suspect.
# The control: rank 3 SIGKILLed in the same cgroup (no OOM kill counted)
# is a lost rank, node2 a suspect.  Needs root and a memory cgroup it can
# make (v1, or v2 with memory delegated).  Not covered: a node's leader
# itself killed (its node has nobody left that reaches rank 0: a lost
# rank, as before).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"

cg="" limit=""
if [ -w /sys/fs/cgroup/memory ] &&
   mkdir "/sys/fs/cgroup/memory/sdsoom.$$" 2>/dev/null; then
	cg=/sys/fs/cgroup/memory/sdsoom.$$
	limit=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
     mkdir "/sys/fs/cgroup/sdsoom.$$" 2>/dev/null; then
	cg=/sys/fs/cgroup/sdsoom.$$
	limit=memory.max
fi
[ -n "$cg" ] || skip_all "no memory cgroup can be made here (needs root and a writable cgroup v1 memory controller, or v2 with memory delegated)"
# the processes left in it are ours: end them by their ids, then remove it
at_exit "for p in \$(cat '$cg/cgroup.procs' 2>/dev/null); do kill -9 \$p; done; sleep 1; rmdir '$cg' 2>/dev/null"
echo $((1 << 30)) >"$cg/$limit" 2>/dev/null ||
	skip_all "the memory cgroup's limit cannot be set"

sd_slurm_begin 2 16

cat >"$SD_TMP/oom.yaml" <<EOF
tests:
  - {op: all_reduce, dtype: float32, min_bytes: 1K, max_bytes: 1K, iters: 20, warmup: 0}
  - {op: reduce_scatter, dtype: float32, min_bytes: 64M, max_bytes: 64M, iters: 1, warmup: 0}
EOF

# srun_oom NAME FAULT LOW [COMMAND...]: the plan (or COMMAND) on 2 nodes
# x 2 tasks, rank 3 in the cgroup; once the run has its row, the limit
# becomes LOW (bytes)
srun_oom() {
	name=$1 fault=$2 low=$3 db=$SD_TMP/$1.db
	shift 3
	[ $# -gt 0 ] || set -- run --no-progress --plan "$SD_TMP/oom.yaml"
	echo $((1 << 30)) >"$cg/$limit"
	t0=$(date +%s)
	SHAKEDOWN_FAULT=$fault timeout 150 $SD_CLUSTER_CLIENT srun --mpi=pmi2 \
		--kill-on-bad-exit=0 -W 60 -t 2 -N 2 --ntasks-per-node=2 \
		--error="$SD_TMP/$name.%t.err" \
		sh -c '[ "$SLURM_PROCID" != 3 ] || echo $$ >"$0"; exec "$@"' \
		"$cg/cgroup.procs" "$SHAKEDOWN" "$@" --backend gloo \
		-T 20 --db "$db" \
		>"$SD_TMP/$name.out" 2>&1 &
	bg=$!
	k=0
	while [ $k -lt 300 ] && kill -0 $bg 2>/dev/null &&
	      [ -z "$(sqlite3 "$db" 'SELECT id FROM runs' 2>/dev/null)" ]; do
		sleep 0.1
		k=$((k + 1))
	done
	in_cg=$(cat "$cg/cgroup.procs" | wc -l)
	echo "$low" >"$cg/$limit" || echo "# could not lower the limit"
	wait $bg
	rc=$?
	took=$(($(date +%s) - t0))
	err0=$(cat "$SD_TMP/$name.0.err" 2>/dev/null)
}

srun_oom oom rank=0,kind=slow,op=all_reduce,delay_us=150000 $((160 << 20))
is "$in_cg" 1 "rank 3, alone, ran in the memory cgroup"
ok '[ $rc != 124 ] && [ $took -le 50 ]' \
	"the step ends on its own, within -T 20 and a few seconds ($took s; srun exit $rc)"
like "$err0" "rank 3 was killed by the kernel's OOM killer on node2 \\(its memory cgroup counted 1 OOM kill during the run\\); the test needed more memory than the rank had: test 2 \\(reduce_scatter up to 67108864 bytes\\) needs ~[0-9.]+M of memory per rank \\(4 x its 64M buffer, as measured with Gloo, \\+10% and 16M\\); node2 is not blamed" \
	"rank 0 names rank 3 on node2 as the OOM killer's victim, with what the test needed"
unlike "$err0" "was lost" "and not as a lost rank"
ok 'grep -Eq "node1: tasks? 0[-,0-9]*: Exited with exit code 3" "$SD_TMP/oom.out"' \
	"rank 0 exits 3 (memory), not 4 (a lost rank)"
is "$(sqlite3 "$SD_TMP/oom.db" 'SELECT count(*) FROM suspects')" 0 \
	"no suspect is recorded"
like "$(sqlite3 "$SD_TMP/oom.db" 'SELECT exit_status || " " || message FROM runs')" \
	"^3 rank 3 was killed by the kernel's OOM killer on node2" \
	"the run's record says it"
run "$SHAKEDOWN" report --bad-nodes --db "$SD_TMP/oom.db"
is "$(printf '%s\n' "$out" | head -n 1)" "" "report --bad-nodes: no bad node"
grep -q "OOM killer" "$SD_TMP/oom.0.err" ||
	{ diag_file "$SD_TMP/oom.out"; diag_file "$SD_TMP/oom.0.err"; diag_file "$SD_TMP/oom.2.err"; }

# control: rank 3 SIGKILLs itself in the same cgroup, its limit kept
srun_oom kill rank=3,kind=kill,op=reduce_scatter $((1 << 30))
is "$in_cg" 1 "control: rank 3 ran in the memory cgroup"
ok 'grep -q "rank 3 (node2, pid [0-9]*) was lost" "$SD_TMP/kill.0.err"' \
	"control: a rank SIGKILLed without an OOM kill is named as lost"
unlike "$err0" "OOM killer" "control: and not as the OOM killer's victim"
is "$(sqlite3 "$SD_TMP/kill.db" 'SELECT exit_status || " " || s.subject
	FROM runs r JOIN suspects s ON s.run_id = r.id')" "4 node2" \
	"control: exit 4, node2 a suspect"
grep -q "was lost" "$SD_TMP/kill.0.err" ||
	{ diag_file "$SD_TMP/kill.out"; diag_file "$SD_TMP/kill.0.err"; }

# gemm through the same guard: rank 3's 3072 product (3 matrices of 36M
# and the check's) does not fit 60M; rank 0's first product waits 3 s so
# that the limit drops before the second
srun_oom gemm rank=0,kind=slow,delay_us=3000000 $((60 << 20)) \
	gemm --sizes 128,3072 --width 0 -n 1 -w 0
is "$in_cg" 1 "gemm: rank 3 ran in the memory cgroup"
like "$err0" "rank 3 \(node2, pid [0-9]+\) was killed by the kernel's OOM killer on node2 during gemm entry 2 of 2 \(its memory cgroup counted 1 OOM kill during the run\): it ran out of memory, and node2 is not blamed" \
	"gemm: rank 0 names rank 3 as the OOM killer's victim"
ok 'grep -Eq "node1: tasks? 0[-,0-9]*: Exited with exit code 3" "$SD_TMP/gemm.out"' \
	"gemm: rank 0 exits 3"
is "$(sqlite3 "$SD_TMP/gemm.db" 'SELECT r.status || " " || r.exit_status ||
	" " || (SELECT count(*) FROM suspects) || " " || (SELECT count(*) FROM
	gemm_results WHERE m = 128) FROM runs r')" "error 3 0 4" \
	"gemm: recorded as error 3, no suspect, the 4 ranks' 128 products kept"
grep -q "OOM killer" "$SD_TMP/gemm.0.err" ||
	{ diag_file "$SD_TMP/gemm.out"; diag_file "$SD_TMP/gemm.0.err"; }

done_testing
