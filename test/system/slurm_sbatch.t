#!/bin/sh
# slurm_sbatch.t - the scripts in sbatch/ submitted to a private three-node
# cluster with sbatch --wait, on the CPU-only path (--gpus-per-node=0, so
# the scripts pick Gloo), and a job cancelled with scancel while it runs:
# the ranks stop, say what was cut short, and exit 5.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
sd_slurm_begin 3 20

export SHAKEDOWN
unset SHAKEDOWN_BACKEND SHAKEDOWN_PLAN SHAKEDOWN_DB SHAKEDOWN_UPLOAD_URL \
	SHAKEDOWN_TOKEN_FILE
SUBMIT=$SD_TMP/submit
mkdir -p "$SUBMIT"

# submit SCRIPT NODES TASKS_PER_NODE OUT ARGS...: sbatch --wait from $SUBMIT
submit() {
	script=$1 nodes=$2 tpn=$3 out=$4
	shift 4
	(cd "$SUBMIT" && timeout 180 $SD_CLUSTER_CLIENT sbatch --wait \
		--quiet -N "$nodes" --ntasks-per-node="$tpn" \
		--gpus-per-node=0 --time=3 -o "$out" \
		"$top_srcdir/sbatch/$script" "$@")
}

out=$SD_TMP/quick.out
submit quick.sbatch 2 2 "$out" --format json --no-progress -e 64K -n 2 \
	-w 1
rc=$?
is "$rc" 0 "quick.sbatch on 2 nodes x 2 tasks: job exit 0 (got $rc)"
ok 'grep -q "backend gloo" "$out"' \
	"quick.sbatch: picks gloo when the job has no GPUs"
ok 'grep -q "srun --mpi=pmi2 --kill-on-bad-exit=0 -W 120 .* --plan cpu" "$out"' \
	"quick.sbatch: runs the shipped plans/cpu.yaml on CPU nodes"
ok 'sd_check_json "$out" all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,sendrecv ""' \
	"quick.sbatch: rows for the plan's collectives, wrong 0"
ok 'grep -q "\"scope\":\"node\",\"members\":\"2-3\",\"nranks\":2," "$out" &&
	grep -q "\"scope\":\"node-pairs\",\"members\":\"0-3\",\"nranks\":4," "$out"' \
	"quick.sbatch: and the plan's node and node-pair tests"
ok 'grep -q "database $SUBMIT/shakedown.db" "$out"' \
	"quick.sbatch: database defaults to the submit folder"
ok 'grep -q "exit status 0\$" "$out"' "quick.sbatch: reports exit status 0"
[ $rc = 0 ] || diag_file "$out" | tail -n 30

out=$SD_TMP/acceptance.out
SHAKEDOWN_DB=$SD_TMP/acc.db submit acceptance.sbatch 3 1 "$out" \
	--format json --no-progress --op all_reduce,broadcast -e 16K -n 2 -w 1
rc=$?
is "$rc" 0 "acceptance.sbatch on 3 nodes x 1 task: job exit 0 (got $rc)"
ok 'sd_check_json "$out" all_reduce,broadcast 3 &&
	grep -q "database $SD_TMP/acc.db" "$out"' \
	"acceptance.sbatch: rows checked, SHAKEDOWN_DB honoured"
[ $rc = 0 ] || diag_file "$out" | tail -n 30

# a rank killed under the script: whatever srun passes on of the ranks'
# last lines (when a task dies by a signal srun may stop passing them on,
# -K or not), the script prints what the run recorded
out=$SD_TMP/killed.out
SHAKEDOWN_FAULT=rank=1,kind=kill,op=all_reduce,iter=2 \
SHAKEDOWN_DB=$SD_TMP/killed.db submit quick.sbatch 2 1 "$out" \
	--no-progress --op all_reduce -e 1M -n 20 -w 1 --timeout 20
rc=$?
isnt "$rc" 0 "quick.sbatch, rank 1 killed: the job fails (exit $rc)"
ok 'grep -q "shakedown quick: as recorded (shakedown report --bad-nodes job:[0-9]*):" "$out"' \
	"quick.sbatch: says it prints the recorded verdict"
ok 'grep -q "^shakedown quick: node2: node node2: rank 1 (node2, pid [0-9]*) was lost" "$out"' \
	"quick.sbatch: the job's output names rank 1 on node2, from the record"
grep -q "as recorded" "$out" || diag_file "$out" | tail -n 20

# scancel while the job runs: thousands of small sizes (the ranks stop
# between sizes), cancelled a few seconds in.
out=$SD_TMP/cancel.out
job=$(cd "$SUBMIT" && timeout 30 $SD_CLUSTER_CLIENT sbatch --parsable \
	-N 2 --ntasks-per-node=1 --gpus-per-node=0 --time=3 -o "$out" \
	"$top_srcdir/sbatch/quick.sbatch" --format json --no-progress \
	--op all_reduce -b 8 -e 256K -i 8 -n 10 -w 1 --db none)
n=0
while [ $n -lt 300 ] && ! grep -q 'srun --mpi=pmi2' "$out" 2>/dev/null
do
	sleep 0.2
	n=$((n + 1))
done
# Let the ranks get into the timed loop.
sleep 3
timeout 30 $SD_CLUSTER_CLIENT scancel "$job"
n=0
while [ $n -lt 300 ] && [ -n "$(timeout 10 $SD_CLUSTER_CLIENT squeue -h \
	-j "$job" -o %i 2>/dev/null)" ]; do
	sleep 0.2
	n=$((n + 1))
done
ok '[ $n -lt 300 ]' "scancel: job $job ended"
ok 'grep -q "cancelled by a signal; cut short during" "$out"' \
	"scancel: the output says what was cut short"
ok 'grep -q "exit status 5\$" "$out"' "scancel: the ranks exit 5 (cancelled)"
ok 'grep -q "Exited with exit code 5" "$out"' \
	"scancel: srun reports exit code 5"
diag_file "$out" | grep -v '^# {' | tail -n 15

# scancel in the middle of a measurement of 100,000 iterations, with the
# cluster's KillWait of 3 s: the ranks cannot reach a measurement boundary
# before SIGKILL, so the measurement is cut short mid-way and the run is
# still recorded as cancelled
out=$SD_TMP/cancel-long.out
job=$(cd "$SUBMIT" && SHAKEDOWN_DB=$SD_TMP/long.db timeout 30 \
	$SD_CLUSTER_CLIENT sbatch --parsable -N 2 --ntasks-per-node=1 \
	--gpus-per-node=0 --time=3 -o "$out" \
	"$top_srcdir/sbatch/quick.sbatch" --no-progress --op all_reduce \
	-b 1M -e 1M -n 100000 -w 0)
n=0
while [ $n -lt 300 ] && [ "$(sqlite3 "$SD_TMP/long.db" "SELECT count(*) FROM
	ranks" 2>/dev/null)" != 2 ]; do
	sleep 0.2
	n=$((n + 1))
done
sleep 2
timeout 30 $SD_CLUSTER_CLIENT scancel "$job"
n=0
while [ $n -lt 300 ] && [ -n "$(timeout 10 $SD_CLUSTER_CLIENT squeue -h \
	-j "$job" -o %i 2>/dev/null)" ]; do
	sleep 0.2
	n=$((n + 1))
done
ok '[ $n -lt 300 ]' "scancel mid-measurement: job $job ended"
is "$(sqlite3 "$SD_TMP/long.db" "SELECT status || ' ' || exit_status FROM runs")" \
	"cancelled 5" "recorded as cancelled with exit status 5, before KillWait's SIGKILL"
is "$(sqlite3 "$SD_TMP/long.db" "SELECT status FROM tests")" cancelled \
	"the cut-short test is marked so"
ok 'grep -q "cut short mid-way" "$out"' "the output says so"
diag_file "$out" | tail -n 8
done_testing
