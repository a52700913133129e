#!/bin/sh
# readme.t - every command the README shows is run, as written.
#
# A command is a line of an indented block that begins with "$ " (the
# lines after it are its output, abridged).  Each has a row below saying
# how it is run and what its output must hold; a README command without a
# row, or a row whose command the README lost, fails here, so a command
# added to the README needs a test.  How:
#   ci     the set-up commands (quickstart.sh): .ci/run must run exactly
#          them, in the README's order (running them here would build and
#          run the suite inside itself)
#   local  run here with sh -c, from a scratch folder that has src/, man/,
#          plans/, sbatch/ and sql/ of this tree, in the README's order
#          (later commands read the results of earlier ones); exit 0 and
#          the output matches the row's pattern (grep -E)
#   slurm  run the same way in the suite's private Slurm cluster (2 nodes,
#          test/system/slurm/cluster.sh), with shakedown on PATH, sbatch
#          given --wait (and a time limit the private partition takes) so
#          the job's end is seen; skipped with the reason where the cluster
#          cannot run (it needs root and the Slurm daemons)
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=$(cd "$top_builddir" && pwd)
README=$top_srcdir/README

# how @@ pattern @@ command (the command exactly as the README has it)
rows=$(cat <<'EOF'
ci @@ - @@ sh quickstart.sh
ci @@ - @@ sh quickstart.sh --check
local @@ # 10 subjects: 10 passed; run passed \(exit status 0\)$ @@ src/shakedown run --local 4
local @@ # 1 subject: 1 passed; run passed @@ src/shakedown run --local 2 --op all_reduce -e 1M
local @@ all_reduce @@ src/shakedown report
local @@ passed @@ src/shakedown runs
local @@ peak_busbw_gbs @@ sqlite3 -header -column shakedown.db "SELECT started_at, uuid, status, tests_passed, tests_total, peak_busbw_gbs FROM run_summary ORDER BY started_at DESC LIMIT 5"
local @@ SYNOPSIS @@ man -l man/shakedown.1
slurm @@ results recorded in shakedown.db @@ srun --mpi=pmi2 -W 120 -N 2 --ntasks-per-node=4 shakedown run --op all_reduce -e 16M
slurm @@ Submitted batch job @@ sbatch -N 2 --gpus-per-node=0 --ntasks-per-node=2 sbatch/quick.sbatch
EOF
)

field() { # N ROW: the row's Nth field
	printf '%s\n' "$2" | awk -F ' @@ ' -v n="$1" '{ print $n }'
}

cmds=$(sed -n 's/^    \$ //p' "$README")
ok '[ -n "$cmds" ]' "the README shows commands (indented lines that begin with '\$ ')"

# every README command has a row, every row a README command
# (loops read here-documents, not pipes: a pipe's loop is a subshell, and
# its tests would not count)
while IFS= read -r c; do
	n=$(printf '%s\n' "$rows" | awk -F ' @@ ' -v c="$c" '$3 == c' | wc -l)
	is "$n" 1 "README command has its row in readme.t: $c"
done <<EOF
$cmds
EOF
while IFS= read -r r; do
	c=$(field 3 "$r")
	n=$(printf '%s\n' "$cmds" | grep -cxF -- "$c")
	ok '[ "$n" -ge 1 ]' "readme.t's row is a README command: $c"
done <<EOF
$rows
EOF

# ci: .ci/run runs the set-up commands, in order, and nothing else of them
want=$(printf '%s\n' "$cmds" | grep '^sh quickstart\.sh')
have=$(sed -n 's/ || status=\$?$//; /^sh quickstart\.sh/p' "$top_srcdir/.ci/run")
is "$have" "$want" ".ci/run runs exactly the README's set-up commands"

# a scratch folder that looks like the top of this tree
T=$(mktemp -d "${TMPDIR:-/tmp}/sd-readme.XXXXXX")
at_exit "rm -rf '$T'"
for d in src man; do ln -s "$top_builddir/$d" "$T/$d"; done
for d in plans sbatch sql; do ln -s "$top_srcdir/$d" "$T/$d"; done

# run_rows HOW: run the README's commands of that kind, in its order
run_rows() {
	while IFS= read -r c; do
		r=$(printf '%s\n' "$rows" | awk -F ' @@ ' -v c="$c" '$3 == c')
		[ "$(field 1 "$r")" = "$1" ] || continue
		pat=$(field 2 "$r")
		out=$(cd "$T" && timeout 300 sh -c "$c" 2>&1 </dev/null)
		rc=$?
		is "$rc" 0 "exit 0: $c"
		[ "$rc" = 0 ] || printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /' >&2
		like "$out" "$pat" "and its output has '$pat'"
	done <<EOF
$cmds
EOF
}

export MANPAGER=cat MANWIDTH=80
if command -v man >/dev/null 2>&1 && command -v sqlite3 >/dev/null 2>&1; then
	run_rows local
else
	n=$(printf '%s\n' "$rows" | grep -c '^local ')
	skip $((2 * n)) "man or sqlite3 not installed (apt-get install man-db sqlite3)"
fi

# slurm: the private cluster, with srun and sbatch as the README types them
nslurm=$(printf '%s\n' "$rows" | grep -c '^slurm ')
. "$top_srcdir/test/system/slurm/cluster.sh"
sd_cluster_start 2
case $? in
0)
	mkdir "$T/bin"
	ln -s "$top_builddir/src/shakedown" "$T/bin/shakedown"
	printf '#!/bin/sh\nexec timeout 120 %s "$@"\n' \
		"$(command -v srun)" >"$T/bin/srun"
	printf '#!/bin/sh\nexec timeout 180 %s --wait --time=3 "$@"\n' \
		"$(command -v sbatch)" >"$T/bin/sbatch"
	chmod +x "$T/bin/srun" "$T/bin/sbatch"
	PATH=$T/bin:$PATH
	unset SHAKEDOWN SHAKEDOWN_BACKEND SHAKEDOWN_PLAN
	run_rows slurm
	job_out=$(ls "$T"/shakedown-quick-*.out 2>/dev/null | head -n 1)
	like "$(cat "$job_out" 2>/dev/null)" "run passed \(exit status 0\)" \
		"sbatch: the job's output is shakedown-quick-JOBID.out in the submit folder"
	;;
1) skip $((2 * nslurm + 1)) "$SD_CLUSTER_SKIP" ;;
*) skip $((2 * nslurm + 1)) "the private Slurm cluster did not start" ;;
esac

done_testing
