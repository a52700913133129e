#!/bin/sh
# bench/ctrl_scale.sh - the control plane at scale (issue 11, item 8): the
# real rank 0 (lib/ctrl.c) against 1,024, 4,096 and 32,768 simulated ranks
# (bench/ctrl_sim: a few processes simulating nodes of PER_NODE ranks,
# each node its leader's one connection to rank 0, which carries all its
# ranks' messages, as lib/ctrl.c's fan-in does), three rounds of the three
# sizes, interleaved: the time of an exchange step (median, p95 and max of
# the steps after the first), rank 0's CPU time per step (on a small
# machine the wall time includes the simulated ranks' own work), its peak
# memory, the start-up, with the machine's load and CPUs.  The goal: under
# 50 ms a step and 256 MiB at rank 0 at 32,768 ranks.  Then, for
# comparison, one run a size with --per-node 1 (a connection a rank, as
# before the fan-in), where the open-files limit allows: rank 0 holds a
# descriptor a connection, so a size above the hard limit (less 64) is
# skipped, and the reason said.  The decisions of each run are the rounds
# of an adaptive node pairing (issue 30: node-pairs:adaptive:K, ADAPTIVE
# = K) of the simulated nodes with one planted bad, worked out by rank
# 0's real driver: a round's word is an int32 a node, to every
# connection; the table says the slowest decision step and the driver's
# slowest round (drive_ms).  Run from the build tree, after make check
# (or make bench/ctrl_sim): sh bench/ctrl_scale.sh [RANKS...]
# Environment: ROUNDS (3), STEPS (50), PROCS (processes simulating, 4),
# PER_NODE (ranks a simulated node, 8), DIRECT (1: the --per-node 1 rows;
# 0: none), ADAPTIVE (K of the decisions' pairing, 0; none: two short
# decisions as before).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SIM=${CTRL_SIM:-$top/bench/ctrl_sim}
[ -x "$SIM" ] || { echo "ctrl_scale.sh: $SIM is not built (make bench/ctrl_sim)" >&2; exit 3; }
sizes=${*:-1024 4096 32768}
rounds=${ROUNDS:-3}
steps=${STEPS:-50}
procs=${PROCS:-4}
per_node=${PER_NODE:-8}
direct=${DIRECT:-1}
adaptive=${ADAPTIVE:-0}
adopt=
[ "$adaptive" = none ] || adopt="--adaptive $adaptive"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctrl_scale.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# rank 0 needs a descriptor a connection (a rank's, at --per-node 1):
# raise the hard limit where allowed (root with CAP_SYS_RESOURCE); a
# comparison row the limit forbids is skipped, and ctrl_sim says what is
# missing for the others
max=0
for n in $sizes; do [ "$n" -gt "$max" ] && max=$n; done
need=$((max + 64))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
	ulimit -Hn "$need" 2>/dev/null && hard=$need
fi
ulimit -n "$hard" 2>/dev/null

# one run: ctrl_sim's line as a table row, or why it failed; a line that
# came is kept in $tmp/ok.$3 (file tag) for the summary
row() { # label ranks tag per_node
	timeout -k 10 1800 "$SIM" -n "$2" -s "$steps" -p "$procs" \
		--per-node "$4" $adopt >"$tmp/out" 2>"$tmp/err"
	rc=$?
	line=$(tail -n 1 "$tmp/out")
	if [ "$rc" = 0 ]; then
		echo "$1 $line" | awk '{
			for (i = 2; i <= NF; i++) {
				split($i, kv, "="); v[kv[1]] = kv[2]
			}
			printf "  %-5s %6s %4s %5s %7s %8s %8s %8s %8s %7s %8s %7s %8s %8s %6s  %s\n",
				$1, v["ranks"], v["per_node"], v["conns"], v["start_s"],
				v["step_ms_median"], v["step_ms_p95"], v["step_ms_max"],
				v["step1_ms"], v["rank0_cpu_ms_per_step"],
				v["rank0_peak_mib"], v["decide_ms_max"],
				("rounds" in v) ? v["rounds"] : "-",
				("decide_bytes" in v) ? v["decide_bytes"] : "-",
				("drive_ms_max" in v) ? v["drive_ms_max"] : "-",
				v["result"]
		}'
		echo "$line" >>"$tmp/ok.$3"
	else
		printf '  %-5s %6s %4s  failed (exit %s): %s\n' "$1" "$2" "$4" \
			"$rc" "$(grep -v '^ctrl_sim: simulated ranks' "$tmp/err" |
				head -n 1)"
	fi
}

echo "# $(uname -n): $(nproc) CPUs, ulimit -Hn $hard; load before: $(cat /proc/loadavg)"
if [ "$adaptive" = none ]; then
	decisions="2 decisions"
else
	decisions="the decisions of node-pairs:adaptive:$adaptive over the nodes, one planted bad (p_rounds: the pairing's rounds; bytes: a decision's to each connection; drive_ms: rank 0's driver, slowest round)"
fi
echo "# $rounds rounds of $sizes ranks, $per_node ranks a node (conns: connections to rank 0), $steps exchange steps and $decisions each, $procs processes simulating"
echo "# ms: an exchange step (sd_ctrl_progress to the end of sd_ctrl_exchange), steps 2..$steps; cpu: rank 0's ms a step"
printf '# %-5s %6s %4s %5s %7s %8s %8s %8s %8s %7s %8s %7s %8s %8s %6s  %s\n' \
	round ranks k conns start_s ms_med ms_p95 ms_max step1_ms cpu_ms \
	peak_mib decide p_rounds bytes drive result
for round in $(seq 1 "$rounds"); do
	for n in $sizes; do
		row "$round" "$n" "$n" "$per_node"
	done
done
if [ "$direct" = 1 ] && [ "$per_node" != 1 ]; then
	echo "# for comparison, --per-node 1 (a connection a rank to rank 0, as before the fan-in), one run a size"
	for n in $sizes; do
		if [ "$hard" != unlimited ] && [ $((n + 64)) -gt "$hard" ]; then
			printf '  %-5s %6s %4s  skipped: %s direct connections need %s open files at rank 0; ulimit -Hn is %s, and this shell cannot raise it (that needs CAP_SYS_RESOURCE)\n' \
				k=1 "$n" 1 "$((n - 1))" "$((n + 64))" "$hard"
			continue
		fi
		row k=1 "$n" "direct.$n" 1
	done
fi
echo "# load after: $(cat /proc/loadavg)"

# per size: the median of the rounds' medians, the worst p95 and peak
echo "# ranks     k  runs  ms_med(median of rounds)  ms_p95(worst)  cpu_ms(median)  peak_mib(max)"
for n in $sizes; do
	if [ ! -s "$tmp/ok.$n" ]; then
		echo "# $n: no run completed"
		[ "$n" = 32768 ] && echo "# goal at 32,768 ranks (under 50 ms a step, 256 MiB): not measured"
		continue
	fi
	awk -v n="$n" -v k="$per_node" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		med[NR] = v["step_ms_median"]; cpu[NR] = v["rank0_cpu_ms_per_step"]
		if (v["step_ms_p95"] + 0 > p95) p95 = v["step_ms_p95"] + 0
		if (v["rank0_peak_mib"] + 0 > peak) peak = v["rank0_peak_mib"] + 0
	} END {
		# a median of a few: sort in place
		for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
			if (med[j] + 0 < med[i] + 0) { t = med[i]; med[i] = med[j]; med[j] = t }
			if (cpu[j] + 0 < cpu[i] + 0) { t = cpu[i]; cpu[i] = cpu[j]; cpu[j] = t }
		}
		m = int((NR + 1) / 2)
		printf "# %6d  %4d  %4d  %24.2f  %13.2f  %14.2f  %13.1f\n", n, k, NR,
			med[m], p95, cpu[m], peak
		if (n == 32768)
			printf "# goal at 32,768 ranks, %d a node (under 50 ms a step, 256 MiB at rank 0): %s (%.2f ms, %.1f MiB)\n",
				k, med[m] < 50 && peak < 256 ? "met" : "not met", med[m], peak
	}' "$tmp/ok.$n"
done
