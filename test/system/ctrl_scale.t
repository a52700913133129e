#!/bin/sh
# ctrl_scale.t - the control-plane bench (bench/ctrl_sim) at 1,024 ranks,
# as a functional test: the real rank 0 (lib/ctrl.c) against 1,023
# simulated ranks held by 4 processes, in nodes of 8 (each node its
# leader's one connection to rank 0, carrying its 8 ranks, as the fan-in
# does: 128 connections).  Every step's results arrive right at rank 0
# and its decisions at every rank (also as an adaptive pairing's rounds,
# an int32 a node); a rank planted to hang in a step (no
# result, its node's connection open), a rank planted to leave its node's
# leader (the leader sends LOST for it) and a leader planted to drop its
# node's connection each end the run with a verdict that names that rank
# and no other, and every simulated rank takes the abort and leaves.  The
# same at a connection a rank (--per-node 1, as before the fan-in); and
# with that, under an open-files limit too low for it (300), rank 0 fails
# cleanly, saying it ran out of open files and to raise the hard limit.
# No timing is asserted (bench/ctrl_scale.sh measures).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

SIM="$top_builddir/bench/ctrl_sim"
[ -x "$SIM" ] || bail_out "$SIM is not built (make check builds it)"
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge 300 ] ||
	skip_all "1,024 ranks in nodes of 8 need about 200 open files; ulimit -Hn is $hard"

# the ranks a verdict's message names, sorted, one line
named() {
	printf '%s\n' "$1" | grep 'verdict in step' | grep -oE 'rank [0-9]+' |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}

# the layout: 4 processes hold ranks 1-255, 256-511, 512-767 and 768-1023,
# in nodes of 8 from each one's first rank (the last node of the first is
# 7): leaders are 1, 9, ..., 73, ..., 249, 256, ..., 512, 520, ...
run -t 120 "$SIM" -n 1024 -s 40 -d 2 -p 4 --per-node 8 --timeout 10000 \
	--start-timeout 30000
is "$rc" 0 "1,024 ranks in nodes of 8, 40 steps: exit 0"
like "$out" "^ranks=1024 procs=4 steps=40 per_node=8 conns=128 .* result=ok$" \
	"one line of figures: 128 connections to rank 0, every result right"
is "$err" "" "nothing went wrong (no message)"
diag "$out"

# the decisions as an adaptive pairing's rounds (issue 30): rank 0's
# driver pairs the 128 simulated nodes, one planted bad, and every round's
# word (an int32 a node) reaches every simulated rank byte for byte
run -t 120 "$SIM" -n 1024 -s 10 -p 4 --per-node 8 --timeout 10000 \
	--start-timeout 30000 --adaptive 0
is "$rc" 0 "1,024 ranks, decisions of node-pairs:adaptive:0: exit 0"
like "$out" " adaptive=0 hosts=128 rounds=2 decide_bytes=512 .* result=ok$" \
	"2 rounds (the disjoint pairs, then the bad node's and its partner's new partners), 512 bytes each, all right"
is "$err" "" "nothing went wrong (no message)"
diag "$out"

# rank 613 (not a leader: 613 = 512 + 8*12 + 5) sends no result in step 5;
# the rest of its node does.  Rank 0 waits the step's budget (1 s) and its
# margin, then names it
run -t 120 "$SIM" -n 1024 -s 40 -p 4 --per-node 8 --timeout 1000 \
	--start-timeout 30000 --stall 613@5
is "$rc" 3 "a stalled rank: a verdict (exit 3)"
like "$err" "rank 613 \(simnode[0-9]+\) sends no result in step 5" \
	"the stall was planted"
like "$err" "verdict in step 5 \(SD_ERR_TIMEOUT\): rank 613 \(simnode[0-9]+, pid [0-9]+\) did not finish step 5" \
	"the verdict is a timeout naming rank 613 in step 5"
is "$(named "$err")" "rank 613" "it names rank 613 and no other"
like "$out" " per_node=8 conns=128 .* blamed=613 " "rank 0 blames rank 613 alone"
like "$out" " steps_done=4 .* sim_aborted=4 sim_failed=0 " \
	"4 steps done; every simulated rank took the abort and left"

# rank 77 (not a leader: its node is 73-80) leaves its node's leader at
# step 9: the leader sends LOST for it, and the rest of the node goes on
# (rank 0 may still be ending step 8 when it learns)
run -t 120 "$SIM" -n 1024 -s 40 -p 4 --per-node 8 --timeout 1000 \
	--start-timeout 30000 --drop 77@9
is "$rc" 3 "a rank lost behind its leader: a verdict (exit 3)"
like "$err" "rank 77 leaves the leader of simnode[0-9]+ \(rank 73\) in step 9: LOST" \
	"rank 77 is not a leader: its leader (rank 73) said LOST"
like "$err" "rank 77 \(simnode[0-9]+, pid [0-9]+\) was lost during step [89]: its connection to its node's leader closed" \
	"the verdict names rank 77 as lost, behind its leader"
is "$(named "$err")" "rank 77" "it names rank 77 and no other"
like "$out" " blamed=77 " "rank 0 blames rank 77 alone"
like "$out" " sim_failed=0 " "every other simulated rank took the abort and left"

pid77=$(printf '%s\n' "$err" | sed -n 's/.*rank 77 (simnode[0-9]*, pid \([0-9]*\)).*/\1/p' | head -n 1)
ok '[ -n "$pid77" ] && ! kill -0 "$pid77" 2>/dev/null' \
	"the process that simulated rank 77 (pid ${pid77:-?}) has left"

# rank 520, the leader of the node 520-527 (the second of the third
# process), drops its node's connection at step 9: rank 0 names the
# leader lost, and none of the ranks behind it
run -t 120 "$SIM" -n 1024 -s 40 -p 4 --per-node 8 --timeout 1000 \
	--start-timeout 30000 --drop 520@9
is "$rc" 3 "a lost leader: a verdict (exit 3)"
like "$err" "rank 520, the leader of simnode[0-9]+ \(ranks 520-527\), drops its connection in step 9" \
	"rank 520 is its node's leader: the node's connection closed"
like "$err" "rank 520 \(simnode[0-9]+, pid [0-9]+\) was lost during step [89]: its control connection closed" \
	"the verdict names rank 520 as lost"
is "$(named "$err")" "rank 520" "it names rank 520 and no other"
like "$out" " blamed=520 " "rank 0 blames rank 520 alone"
like "$out" " sim_failed=0 " "every other simulated rank took the abort and left"

# a connection a rank, as before the fan-in
if [ "$hard" = unlimited ] || [ "$hard" -ge 1100 ]; then
	run -t 120 "$SIM" -n 1024 -s 40 -d 2 -p 4 --per-node 1 \
		--timeout 10000 --start-timeout 30000
	is "$rc" 0 "1,024 ranks, a connection each: exit 0"
	like "$out" "^ranks=1024 procs=4 steps=40 per_node=1 conns=1023 .* result=ok$" \
		"1,023 connections to rank 0, every result right"
	is "$err" "" "nothing went wrong (no message)"
	diag "$out"
else
	skip 3 "1,024 direct connections need about 1,100 open files; ulimit -Hn is $hard"
fi

# too few open files for a connection a rank: ctrl_sim says its own raise
# failed and goes on (each simulating process needs only its quarter);
# rank 0 runs out taking the connections, and says so
run -t 60 sh -c 'ulimit -Sn 300 && ulimit -Hn 300 && exec "$@"' sh "$SIM" \
	-n 1024 -s 10 -p 4 --per-node 1 --timeout 1000 --start-timeout 20000
is "$rc" 1 "at ulimit -n 300, 1,024 direct ranks: sd_ctrl_start fails (exit 1, not a timeout or a signal)"
like "$err" "need 1087 open files at rank 0; the limit is 300 \(hard 300\) and cannot be raised .*going on" \
	"ctrl_sim says the limit is too low and goes on"
like "$err" "sd_ctrl_start \(1024 ranks\): SD_ERR_BOOTSTRAP: control plane: rank 0 ran out of open files" \
	"rank 0 says it ran out of open files"
like "$err" "raise the hard limit" "and to raise the hard limit"
unlike "$err" "Too many open files" \
	"no simulating process ran out first"
diag "$(printf '%s\n' "$err" | grep 'ran out of open files')"
done_testing
