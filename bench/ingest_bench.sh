#!/bin/sh
# bench/ingest_bench.sh - `shakedown ingest` on a 1 GB log: peak memory
# (GNU time's maximum resident set) and speed, beside `wc -l` and
# `grep -c` reading the same file in the same sitting (the machine's own
# reading speed, interleaved round by round), with the machine's load.
#
#   make && bench/ingest_bench.sh            # 1024 MB, 3 rounds
#   MB=64 bench/ingest_bench.sh 1            # smoke
#   OLD_SD=/path/to/older/src/shakedown bench/ingest_bench.sh   # and a
#                                            # build to compare, interleaved
#
# Two shapes, both made of a real published log repeated until MB
# megabytes (test/data/ingest/real/):
#  - megatron: attnbench_llama1b (srun -l and torchrun prefixes, a step
#    line every iteration: 344 rows in 366 KB), renumbered so the copies
#    are one run: about 0.94 rows per KB, the densest log we have;
#  - hf: tf4.57's Trainer stdout (tqdm bars, warnings, a dict every 10
#    steps: 175 rows in 757 KB), read with --log-every 10.
# Results: bench/README-ingest.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SD=$top/src/shakedown
R=$top/test/data/ingest/real
MB=${MB:-1024}
ROUNDS=${1:-3}
[ -x "$SD" ] || { echo "ingest_bench: build first (make)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "ingest_bench: GNU time is needed (apt install time)" >&2; exit 2; }
W=${TMPDIR:-/tmp}/ingest_bench.$$
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT INT TERM
free_mb=$(df -Pm "$W" | awk 'NR == 2 { print $4 }')
[ "$free_mb" -gt $((2 * MB + 512)) ] ||
	{ echo "ingest_bench: $W has $free_mb MB free; $((2 * MB + 512)) needed" >&2; exit 2; }

# the Megatron log, copies renumbered: iteration N of copy c is
# N + c x 500 (its run's length), every copy's rows one run
src=$R/megatron/attnbench_llama1b_srun_torchrun_prefix_tflops.out
copies=$(( MB * 1048576 / $(wc -c <"$src") + 1 ))
awk -v copies="$copies" '
	{
		line[NR] = $0
		if (match($0, /iteration +[0-9]+\/ +[0-9]+ \|/)) {
			pre[NR] = substr($0, 1, RSTART - 1)
			post[NR] = substr($0, RSTART + RLENGTH)
			split(substr($0, RSTART, RLENGTH), a, /[ \/]+/)
			it[NR] = a[2]
		}
	}
	END {
		for (c = 0; c < copies; c++)
			for (i = 1; i <= NR; i++)
				if (i in it)
					printf "%siteration %8d/%8d |%s\n", pre[i],
					       it[i] + c * 500, copies * 500, post[i]
				else
					print line[i]
	}' "$src" >"$W/megatron.log"
src=$R/hf/tf4.57-trl-sft-qwen3-8b-qlora-stdout-buffered.log
copies=$(( MB * 1048576 / $(wc -c <"$src") + 1 ))
i=0
while [ $i -lt "$copies" ]; do cat "$src"; i=$((i + 1)); done >"$W/hf.log"

printf '# ingest_bench: %s, %s rounds, %s\n' "$(uname -m)" "$ROUNDS" "$(date -u +%FT%TZ)"
for f in megatron hf; do
	printf '# %s.log: %s bytes, %s lines\n' "$f" "$(wc -c <"$W/$f.log")" "$(wc -l <"$W/$f.log")"
done
printf '%-9s %-6s %5s %9s %9s %8s %6s\n' shape tool round seconds MB/s maxrss_MB load1
# time -f: elapsed seconds and maximum RSS in KB
measure() { # shape tool round command...
	shape=$1 tool=$2 round=$3
	shift 3
	# into a file: GNU grep stops at the first match when its output
	# is /dev/null
	/usr/bin/time -f '%e %M' -o "$W/t" "$@" >"$W/out" 2>"$W/err" || {
		echo "ingest_bench: $shape/$tool failed: $(head -n 3 "$W/err")" >&2
		exit 1
	}
	read -r secs kb <"$W/t"
	bytes=$(wc -c <"$W/$shape.log")
	awk -v s="$shape" -v t="$tool" -v r="$round" -v e="$secs" -v k="$kb" \
	    -v b="$bytes" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
		printf "%-9s %-6s %5d %9.2f %9.1f %8.1f %6s\n", s, t, r, e,
		       (e > 0 ? b / 1048576 / e : 0), k / 1024, l }'
}
r=1
while [ $r -le "$ROUNDS" ]; do
	for shape in megatron hf; do
		args=
		[ $shape = hf ] && args="--log-every 10"
		measure $shape wc $r wc -l "$W/$shape.log"
		# shellcheck disable=SC2086
		measure $shape ingest $r "$SD" ingest "$W/$shape.log" $args --db none --json
		measure $shape grep $r grep -c "loss" "$W/$shape.log"
		# shellcheck disable=SC2086
		[ -z "${OLD_SD:-}" ] ||
			measure $shape before $r "$OLD_SD" ingest "$W/$shape.log" $args --db none --json
	done
	r=$((r + 1))
done
# the rows of the run read, for the memory per row
for shape in megatron hf; do
	args=
	[ $shape = hf ] && args="--log-every 10"
	# shellcheck disable=SC2086
	"$SD" ingest "$W/$shape.log" $args --db none --json 2>/dev/null | tail -n 1 |
		sed -n 's/.*"rows": *\([0-9]*\).*/# '"$shape"': \1 rows read/p'
done
