#!/bin/sh
# bench/node_pairs.sh - do the groups of a round really run together?  On
# the test suite's private Slurm cluster (4 nodes in their own network
# namespaces, one rank each; needs root, slurmctld and slurmd), a
# sendrecv of 4M x 40 iterations between one pair of nodes alone, and the
# same as scope node-pairs (6 pairs in 3 rounds of 2), three runs each,
# interleaved: each run's wall time from the database, and the sum of its
# pairs' own timed work.  Overlap shows as a node-pairs wall time below
# that sum.  Run from the build tree: sh bench/node_pairs.sh
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$top_srcdir
export top_srcdir top_builddir
. "$top_srcdir/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
SD_SLURM_NETNS=1 sd_slurm_begin 4 1
for p in one np; do
	scope=world
	[ $p = np ] && scope=node-pairs
	cat >"$SD_TMP/$p.yaml" <<Y
name: $p
defaults: {dtype: float32, min_bytes: 4M, max_bytes: 4M, iters: 40,
           warmup: 2, in_place: false, check: 0, timeout: 60}
tests:
  - {op: sendrecv, scope: $scope}
Y
done
DB=$SD_TMP/bench.db
diag "$(uptime)"
diag "plan       pairs  wall_s  sum_of_pairs_timed_s"
for i in 1 2 3; do
	for p in one np; do
		n=4
		[ $p = one ] && n=2
		$SD_CLUSTER_CLIENT srun -K -t 3 --mpi=pmi2 -N $n -n $n \
			"$SHAKEDOWN" run --backend gloo --plan "$SD_TMP/$p.yaml" \
			--db "$DB" --no-progress >/dev/null 2>&1
		diag "$(sqlite3 "$DB" "SELECT printf('%-10s %5d  %6.3f  %6.3f', '$p',
			count(DISTINCT t.id), (julianday(r.finished_at) -
			julianday(r.started_at)) * 86400, sum(m.time_us) * 42 / 1e6)
			FROM runs r JOIN tests t ON t.run_id = r.id JOIN measurements m
			ON m.test_id = t.id WHERE r.id = (SELECT max(id) FROM runs)")"
	done
done
pass "measured"
