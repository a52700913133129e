#!/bin/sh
# bench/train_calibrate.sh - how closely healthy runs of `shakedown train`
# reproduce the shipped reference curves (the largest difference is the
# reference's "healthy:" line, and 10 times it the same-arithmetic loss
# check's band: lib/train/metrics.h, SD_TRAIN_SAME_FACTOR), and how far
# planted gradient corruption moves the curve.  Each run trains 100 steps with --save-ref and its curve is
# compared step by step with the shipped reference of its config (seed 1,
# fp32 on the CPU): the largest |loss - reference| over the 100 steps.
# Healthy variants: the rank count (the global batch split over 1 to 8
# ranks), the micro-batch (the same share as more or fewer micro-batches),
# and the OpenBLAS kernels (OPENBLAS_CORETYPE: each kernel family this CPU
# runs), each REPEAT times.  Planted: SHAKEDOWN_FAULT grad_corrupt at a
# relative scale (each gradient element moved by scale x its own size).
# Run from the build tree: sh bench/train_calibrate.sh [CONFIG...]
# (test, default; default: test).  Environment: REPEAT (2), CORES (the
# OpenBLAS kernel families to try: SkylakeX Haswell Sandybridge Nehalem,
# those this CPU cannot run fail and are said).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SD=${SHAKEDOWN:-$top/src/shakedown}
[ -x "$SD" ] || { echo "train_calibrate.sh: $SD is not built" >&2; exit 3; }
configs=${*:-test}
repeat=${REPEAT:-2}
cores=${CORES:-SkylakeX Haswell Sandybridge Nehalem}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/train_cal.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# maxdiff REF CURVE: the largest |loss - reference| over their common
# steps, and how many steps
maxdiff() {
	awk -F'\t' 'NR == FNR { if ($1 ~ /^[0-9]+$/) r[$1] = $2; next }
		$1 ~ /^[0-9]+$/ && ($1 in r) { d = $2 - r[$1]; if (d < 0) d = -d
			if (d > m) m = d; n++ }
		END { printf "%.3g %d\n", m, n }' "$1" "$2"
}

# one RUN LABEL ENV... -- ARGS...: train 100 steps, print the row
one() {
	label=$1
	shift
	envs=
	while [ "$1" != -- ]; do envs="$envs $1"; shift; done
	shift
	rm -f "$tmp/c.ref"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	# --slow-factor: many ranks on few cores are not a slow node here
	env $envs "$SD" train --config "$cfg" --steps 100 --db none \
		--no-progress --slow-factor 1000 --save-ref "$tmp/c.ref" \
		"$@" >"$tmp/out" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	if [ "$rc" != 0 ] || [ ! -s "$tmp/c.ref" ]; then
		printf '  %-34s failed (exit %s): %s\n' "$label" "$rc" \
			"$(grep -v '^#' "$tmp/out" | tail -n 1)"
		return
	fi
	set -- $(maxdiff "$ref" "$tmp/c.ref")
	printf '  %-34s %10s %5s %6.1f\n' "$label" "$1" "$2" \
		"$(echo "$t1 - $t0" | bc)"
	case $label in grad*) ;; *) echo "$1 $label" >>"$tmp/rows.$cfg" ;; esac
}

echo "# $(uname -n): $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for cfg in $configs; do
	ref=$top/plans/reference/gpt-$cfg-cpu.ref
	[ -f "$ref" ] || { echo "# $cfg: no shipped reference $ref"; continue; }
	echo "# config $cfg against $(basename "$ref") (seed 1, fp32 CPU), 100 steps, $repeat times each"
	printf '# %-34s %10s %5s %6s\n' variant max_diff steps seconds
	: >"$tmp/rows.$cfg"
	case $cfg in test) ranks="1 2 4 8" micro="1 2 4 8" ;; *) ranks="1 2 4" micro="1 8" ;; esac
	for i in $(seq 1 "$repeat"); do
		for n in $ranks; do one "ranks $n" -- --local "$n"; done
		for m in $micro; do one "1 rank, micro-batch $m" -- --local 1 --micro-batch "$m"; done
		for c in $cores; do one "2 ranks, $c kernels" OPENBLAS_CORETYPE="$c" -- --local 2; done
	done
	awk '{ if ($1 + 0 >= m) { m = $1 + 0; w = $0; sub(/^[^ ]* /, "", w) } n++ } END {
		printf "# %d healthy runs: the largest |diff| from the reference %.3g (%s)\n", n, m, w }' "$tmp/rows.$cfg"
	echo "# planted: grad_corrupt on rank 0 from step 1, each element moved by SCALE x its size"
	for s in 1e-3 1e-4 1e-5 1e-6; do
		one "grad_corrupt rel $s" SHAKEDOWN_FAULT="rank=0,kind=grad_corrupt,iter=1,scale=$s,rel=1" -- --local 2
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
