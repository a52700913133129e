#!/bin/sh
# bench/train_slow_spread.sh - the spread of healthy ranks' compute time in
# `shakedown train`, which its slow-rank limit (--slow-factor, default
# TRAIN_SLOW_FACTOR in src/cmd_train.c) must sit above, and how large a
# planted slow rank (SHAKEDOWN_FAULT kind=slow) the limit catches.
#
#   make && bench/train_slow_spread.sh           # 40 healthy runs a shape, about 3 minutes
#   RUNS=5 bench/train_slow_spread.sh            # smoke
#   CONFIGS="test default" RUNS=10 bench/train_slow_spread.sh   # and the
#                                   # default config (about 30 s a run here)
#
# For each run: every rank's mean compute time over the timed steps (the
# per-rank rows of the database), over the median of the other ranks'
# (loo) and over the median of all (all): the largest such ratio is what
# the check compares with the limit.  Shapes: --local 2 and
# --local 4, the configs of $CONFIGS (default: test; 100 steps each).  Then
# rank 1 is slowed by delay_us chosen as a share of the median compute
# time of a healthy run, to see the ratio a given slowdown reaches.
# Results: bench/README-train.md, "The slow-rank limit".
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SD=$top/src/shakedown
RUNS=${RUNS:-40}
CONFIGS=${CONFIGS:-test}
[ -x "$SD" ] || { echo "train_slow_spread: build first (make)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "train_slow_spread: sqlite3 is needed" >&2; exit 2; }
W=${TMPDIR:-/tmp}/slow_spread.$$
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT INT TERM

# of the last run in $W/db: the largest rank's mean compute time over the
# median of the other ranks' (leave-one-out: with 2 ranks, over the other
# rank), the same over the median of all ranks, and that median in
# microseconds
ratio() {
	sqlite3 -batch -separator ' ' "$W/db" "
		SELECT rank, avg(compute_s) FROM train_steps
		WHERE run_id = (SELECT max(id) FROM runs)
		AND rank IS NOT NULL AND timed = 1 GROUP BY rank" |
	awk '{ c[NR] = $2 }
	function med(skip,   i, k, n, v) {
		n = 0
		for (i = 1; i <= NR; i++) if (i != skip) v[++n] = c[i]
		for (i = 2; i <= n; i++) {	# insertion sort: few ranks
			x = v[i]; k = i - 1
			while (k > 0 && v[k] > x) { v[k + 1] = v[k]; k-- }
			v[k + 1] = x
		}
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	END {
		all = med(0); loo = 0; top = 0
		for (i = 1; i <= NR; i++) {
			r = c[i] / med(i); if (r > loo) loo = r
			if (c[i] > top) top = c[i]
		}
		printf "%.4f %.4f %.1f\n", loo, top / all, all * 1e6
	}'
}
printf '# train_slow_spread: %s runs a shape, %s, load %s\n' "$RUNS" \
	"$(date -u +%FT%TZ)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-7s %-9s %5s %8s %8s %10s\n' config ranks fault run loo all median_us
for config in $CONFIGS; do
	for ranks in 2 4; do
		i=1
		while [ "$i" -le "$RUNS" ]; do
			rm -f "$W/db"
			"$SD" train --local "$ranks" --config "$config" \
				--no-progress --slow-factor 1000 --db "$W/db" \
				>/dev/null 2>"$W/err" ||
				{ echo "train_slow_spread: run failed: $(head -n 2 "$W/err")" >&2; exit 1; }
			set -- $(ratio)
			printf '%-8s %-7s %-9s %5d %8s %8s %10s\n' "$config" "$ranks" none "$i" "$1" "$2" "$3"
			med=$3
			i=$((i + 1))
		done
		# rank 1 slowed by 10, 20, 30 and 50% of the last median
		for pct in 10 20 30 50; do
			d=$(awk -v m="$med" -v p="$pct" 'BEGIN { d = int(m * p / 100 + 0.5); print d < 1 ? 1 : d }')
			rm -f "$W/db"
			SHAKEDOWN_FAULT="rank=1,kind=slow,delay_us=$d" "$SD" train \
				--local "$ranks" --config "$config" --no-progress \
				--slow-factor 1000 --db "$W/db" >/dev/null 2>"$W/err" ||
				{ echo "train_slow_spread: run failed: $(head -n 2 "$W/err")" >&2; exit 1; }
			set -- $(ratio)
			printf '%-8s %-7s %-9s %5d %8s %8s %10s\n' "$config" "$ranks" "+$pct%" 1 "$1" "$2" "$3"
		done
	done
done
