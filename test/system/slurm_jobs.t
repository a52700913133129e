#!/bin/sh
# slurm_jobs.t - shakedown gemm and train under srun --mpi=pmi2 on a
# private two-node cluster, one rank per node, the Gloo backend: a rank
# killed with SIGKILL, and a rank that stalls.  Rank 0 must name the rank
# and its node within --timeout and a few seconds, record the node as a
# suspect and the run as failed with exit status 4, and end the step
# (they ran on until srun's -W killed them, nobody named).  No -K: the
# survivors must notice on their own; -W bounds the wait.  Timings are
# generous bounds only (2 shared cores).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"
sd_slurm_begin 2 16

DB=$SD_TMP/jobs.db
TRAIN="train --config test --steps 400 --no-progress"
GEMM="gemm --sizes 256,512 --width 0 -n 3 -w 1"

# case NAME TIMEOUT FAULT WHAT ARGS...: rank 1 of 2 fails as FAULT says;
# rank 0 must name it doing WHAT (an extended regular expression)
case_() {
	name=$1 T=$2 fault=$3 what=$4
	shift 4
	t0=$(date +%s)
	# each task's stderr to its own file: srun may stop forwarding the
	# others' once a task is killed
	SHAKEDOWN_FAULT=$fault timeout 150 srun --mpi=pmi2 \
		--kill-on-bad-exit=0 -W 110 -t 3 -N 2 --ntasks-per-node=1 \
		--error="$SD_TMP/$name.%t.err" "$SHAKEDOWN" "$@" \
		--backend gloo -T "$T" --db "$DB" >"$SD_TMP/$name.out" 2>&1
	rc=$?
	took=$(($(date +%s) - t0))
	bound=$((T + 25))
	ok '[ $rc != 124 ] && [ $took -le $bound ]' \
		"$name: the step ends within -T $T and a few seconds, not at srun's -W 110 ($took s; bound $bound s)"
	ok 'grep -Eq "rank 1 \(node2, pid [0-9]+\) (was lost|did not (complete|finish)) $what" "$SD_TMP/$name.0.err"' \
		"$name: rank 0 names rank 1 and its node, node2, and what it was doing"
	ok 'grep -q "Exited with exit code 4" "$SD_TMP/$name.out"' \
		"$name: rank 0 exits 4"
	is "$(sqlite3 "$DB" "SELECT r.status || ' ' || r.exit_status || ' ' ||
		s.kind || ' ' || s.subject FROM runs r JOIN suspects s ON
		s.run_id = r.id WHERE r.id = (SELECT max(id) FROM runs)")" \
		"failed 4 node node2" \
		"$name: recorded as failed, exit 4, node2 a suspect"
	grep -Eq "rank 1 \(node2, pid [0-9]+\) (was lost|did not (complete|finish)) $what" \
		"$SD_TMP/$name.0.err" ||
		{ diag_file "$SD_TMP/$name.out"; diag_file "$SD_TMP/$name.0.err"; }
}

# rank 1 dies before step 6: rank 0 names the step it last recorded (5)
# or the one it entered (6), whichever it is at when the connection
# closes (under load, 5)
case_ "train, rank 1 killed" 10 rank=1,kind=kill,iter=5 \
	"during training step [56]" $TRAIN
case_ "gemm, rank 1 killed" 10 rank=1,kind=kill \
	"during (start-up|gemm entry 1 of 2)" $GEMM
case_ "train, rank 1 stalls" 5 rank=1,kind=stall,iter=3 \
	"training step 4 within 5 s" $TRAIN
case_ "gemm, rank 1 stalls" 5 rank=1,kind=stall \
	"gemm entry 1 of 2 within 5 s" $GEMM

done_testing
