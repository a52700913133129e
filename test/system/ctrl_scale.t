#!/bin/sh
# ctrl_scale.t - the control-plane bench (bench/ctrl_sim) at 1,024 ranks,
# as a functional test: the real rank 0 (lib/ctrl.c) against 1,023
# simulated ranks held by 4 processes.  Every step's results arrive right
# at rank 0 and its decisions at every rank; a rank planted to hang in a
# step (no result, its connection open) and one planted to drop its
# connection each end the run with a verdict that names that rank and no
# other, and every simulated rank takes the abort and leaves.  No timing
# is asserted (bench/ctrl_scale.sh measures).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

SIM="$top_builddir/bench/ctrl_sim"
[ -x "$SIM" ] || bail_out "$SIM is not built (make check builds it)"
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge 1100 ] ||
	skip_all "1,024 ranks need about 1,100 open files; ulimit -Hn is $hard"

# the ranks a verdict's message names, sorted, one line
named() {
	printf '%s\n' "$1" | grep 'verdict in step' | grep -oE 'rank [0-9]+' |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}

run -t 120 "$SIM" -n 1024 -s 40 -d 2 -p 4 --timeout 10000 --start-timeout 30000
is "$rc" 0 "1,024 ranks, 40 steps: exit 0"
like "$out" "^ranks=1024 procs=4 steps=40 .* result=ok$" \
	"one line of figures, every result right"
is "$err" "" "nothing went wrong (no message)"
diag "$out"

# rank 613 sends no result in step 5: rank 0 waits the step's budget (1 s)
# and its margin, then names it
run -t 120 "$SIM" -n 1024 -s 40 -p 4 --timeout 1000 --start-timeout 30000 \
	--stall 613@5
is "$rc" 3 "a stalled rank: a verdict (exit 3)"
like "$err" "verdict in step 5 \(SD_ERR_TIMEOUT\): rank 613 \(simhost[0-9]+, pid [0-9]+\) did not finish step 5" \
	"the verdict is a timeout naming rank 613 in step 5"
is "$(named "$err")" "rank 613" "it names rank 613 and no other"
like "$out" " blamed=613 " "rank 0 blames rank 613 alone"
like "$out" " steps_done=4 .* sim_aborted=4 sim_failed=0 " \
	"4 steps done; every simulated rank took the abort and left"

# rank 77 closes its connection at step 9 (rank 0 may still be ending
# step 8 when it notices)
run -t 120 "$SIM" -n 1024 -s 40 -p 4 --timeout 1000 --start-timeout 30000 \
	--drop 77@9
is "$rc" 3 "a lost rank: a verdict (exit 3)"
like "$err" "rank 77 \(simhost[0-9]+, pid [0-9]+\) was lost during step [89]: its control connection closed" \
	"the verdict names rank 77 as lost"
is "$(named "$err")" "rank 77" "it names rank 77 and no other"
like "$out" " blamed=77 " "rank 0 blames rank 77 alone"
like "$out" " sim_failed=0 " "every other simulated rank took the abort and left"

pid77=$(printf '%s\n' "$err" | sed -n 's/.*rank 77 (simhost[0-9]*, pid \([0-9]*\)).*/\1/p' | head -n 1)
ok '[ -n "$pid77" ] && ! kill -0 "$pid77" 2>/dev/null' \
	"the process that simulated rank 77 (pid ${pid77:-?}) has left"
done_testing
