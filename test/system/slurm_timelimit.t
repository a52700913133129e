#!/bin/sh
# slurm_timelimit.t - a job that runs into its Slurm time limit: Slurm
# sends SIGTERM, then SIGKILL after KillWait (3 s on the test cluster).
# The ranks are in the middle of a measurement of 100,000 iterations (one
# rank slowed 50 ms per operation, so the cores stay free while it waits):
# they stop within the grace, the run is recorded cancelled with exit
# status 5 and the cut-short test marked so.  Slurm enforces limits in
# minutes, checked about every 30 s, so this waits 1 to 2 minutes.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"
sd_slurm_begin 2 6

export SHAKEDOWN
unset SHAKEDOWN_BACKEND SHAKEDOWN_PLAN SHAKEDOWN_UPLOAD_URL SHAKEDOWN_TOKEN_FILE
SUBMIT=$SD_TMP/submit
mkdir -p "$SUBMIT"
DB=$SD_TMP/limit.db
out=$SD_TMP/limit.out
t0=$(date +%s)
job=$(cd "$SUBMIT" && SHAKEDOWN_DB=$DB \
	SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=50000 \
	timeout 30 $SD_CLUSTER_CLIENT sbatch --parsable -N 2 \
	--ntasks-per-node=1 --gpus-per-node=0 --time=1 -o "$out" \
	"$top_srcdir/sbatch/quick.sbatch" --no-progress --op all_reduce \
	-b 1K -e 1K -n 100000 -w 0)
state() {
	timeout 10 $SD_CLUSTER_CLIENT scontrol -o show job "$job" 2>/dev/null |
		sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}
n=0
while [ $n -lt 900 ]; do
	st=$(state)
	case $st in PENDING | RUNNING | CONFIGURING | COMPLETING | "") ;; *) break ;; esac
	sleep 0.2
	n=$((n + 1))
done
ok '[ $n -lt 900 ]' "job $job ended ($(($(date +%s) - t0)) s)"
is "$st" TIMEOUT "Slurm ended it for its time limit (JobState)"
is "$(sqlite3 "$DB" "SELECT status || ' ' || exit_status FROM runs")" \
	"cancelled 5" "recorded as cancelled with exit status 5, before KillWait's SIGKILL"
is "$(sqlite3 "$DB" "SELECT status FROM tests")" cancelled \
	"the cut-short test is marked so"
ok 'grep -q "cut short mid-way" "$out"' "the output says what was cut short"
ok 'grep -q "Exited with exit code 5" "$out"' "srun reports the ranks' exit code 5"
diag_file "$out" | tail -n 12
done_testing
