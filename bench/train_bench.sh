#!/bin/sh
# train_bench.sh - the training workload's CPU model (lib/train/, timed by
# bench/train_raw) against the same model and configuration in PyTorch
# eager (bench/torch_gpt.py), one thread each, in one sitting:
#
#   1. the kernels: lib/blas.c picks OpenBLAS's kernels for this CPU
#      itself (cpu_coretype(), set as OPENBLAS_CORETYPE before it loads the
#      library, unless the environment already sets it) and train_raw's
#      "# blas:" line names the core OpenBLAS then runs; this script reads
#      that core and exports it as OPENBLAS_CORETYPE, so PyTorch, on the same
#      Debian OpenBLAS, gets the same kernels and both multiply alike.  It
#      stops (exit 1) if the line names OpenBLAS but no core it can read;
#      with a CBLAS that is not OpenBLAS there is nothing to match;
#   2. data and start: train_raw writes its tokens and initial parameters,
#      and both train on those tokens;
#   3. rounds, interleaved (the order alternates): each round runs both,
#      with the load average before; a run's tokens/s is tokens per step /
#      its median step (steadier than the mean on a shared host; both
#      programs print both); then the medians (min-max) over the rounds of
#      tokens/s and of the ratio train_raw / PyTorch (goal: >= 1.0), and
#      each one's share of a step in matmul;
#   4. the loss of the first steps: train_raw, PyTorch from its own
#      initialisation, PyTorch from lib/train's, beside the loss floor.
#
# usage: bench/train_bench.sh [ROUNDS]              (default 5)
# environment: CONFIG (default or test), STEPS (30 a run, WARMUP 2 of them
# untimed), LOSS_STEPS (30), EXTRA (more options for both, e.g. "--ranks
# 4"), TORCH_PYTHON (/usr/bin/python3: Debian's python3-torch), KEEP=DIR
# (keep the outputs there).  Run from the build tree after `make`; not part
# of `make check`.  Figures and what they mean: bench/README-train.md.
set -eu
ROUNDS=${1:-5}
CONFIG=${CONFIG:-default}
STEPS=${STEPS:-30}
WARMUP=${WARMUP:-2}
LOSS_STEPS=${LOSS_STEPS:-30}
EXTRA=${EXTRA:-}
TORCH_PYTHON=${TORCH_PYTHON:-/usr/bin/python3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
RAW=$TOP/bench/train_raw
TORCH=$TOP/bench/torch_gpt.py

if [ ! -x "$RAW" ]; then
	echo "train_bench: $RAW is missing; run make first" >&2
	exit 2
fi
common="--config $CONFIG $EXTRA"

# The core in train_raw's "# blas: IMPL" line ($1: IMPL, lib/blas.c's
# sd_blas()->impl), on stdout:
#   OpenBLAS 0.3.21 (core SkylakeX, chosen by shakedown), 1 thread
#   OpenBLAS 0.3.21 (core Haswell), 1 thread    (OPENBLAS_CORETYPE from the
#                                       environment, or none that fits)
# gives SkylakeX and Haswell.  Nothing (status 0) for a CBLAS that is not
# OpenBLAS ("cblas_sgemm of LIB, 1 thread") or none ("none (WHY)");
# status 1, and why on stderr, for any other line: an OpenBLAS that names
# no core this reads, so PyTorch would pick kernels of its own.
blas_core() {
	case $1 in
	'cblas_sgemm of '* | 'none ('*) return 0 ;;
	esac
	c=$(printf '%s\n' "$1" |
		sed -n 's/^.* (core \([^ ,()]\{1,\}\)[,)].*$/\1/p')
	if [ -z "$c" ]; then
		echo "train_bench: cannot read the OpenBLAS core from train_raw's" \
			"'# blas: $1'; the kernel matching no longer fits" \
			"lib/blas.c's wording, and PyTorch would run kernels of its" \
			"own (fix blas_core in $0)" >&2
		return 1
	fi
	printf '%s\n' "$c"
}

# 1. kernels, before anything long
# shellcheck disable=SC2086
if ! first=$("$RAW" $common --steps 1); then
	echo "train_bench: $RAW $common --steps 1 failed" >&2
	exit 1
fi
blas=$(printf '%s\n' "$first" | sed -n 's/^# blas: //p' | sed -n 1p)
if [ -z "$blas" ]; then
	echo "train_bench: no '# blas:' line from $RAW; cannot match" \
		"PyTorch's kernels to train_raw's" >&2
	exit 1
fi
core=$(blas_core "$blas") || exit 1
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [ -n "$core" ]; then
	export OPENBLAS_CORETYPE="$core"
	kernels="OpenBLAS core $core for both (OPENBLAS_CORETYPE=$core)"
else
	kernels="none to match, train_raw's BLAS is not OpenBLAS ($blas); PyTorch's as chosen at load"
fi
echo "# train_bench: config $CONFIG${EXTRA:+ $EXTRA}, $STEPS steps a run ($WARMUP untimed), $ROUNDS rounds"
echo "# kernels: $kernels; $(getconf _NPROCESSORS_ONLN) cores; $(uname -r)"

if ! "$TORCH_PYTHON" -c 'import torch, numpy' 2>/dev/null; then
	echo "train_bench: $TORCH_PYTHON cannot import torch and numpy;" \
		"install python3-torch (Debian) or set TORCH_PYTHON" >&2
	exit 2
fi
if [ -n "${KEEP:-}" ]; then
	OUT=$KEEP
	mkdir -p "$OUT"
else
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/train_bench.XXXXXX")
	trap 'rm -rf "$OUT"' EXIT
fi
value() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
load() { cut -d' ' -f1 /proc/loadavg; }

# 2. data and start
dump=$STEPS
[ "$LOSS_STEPS" -gt "$dump" ] && dump=$LOSS_STEPS
# shellcheck disable=SC2086
"$RAW" $common --steps "$dump" --warmup "$WARMUP" --dump-tokens "$OUT/tokens" \
	--dump-init "$OUT/init" >"$OUT/raw.loss"
grep '^#' "$OUT/raw.loss"
# train_raw now runs under the exported OPENBLAS_CORETYPE: the same core
again=$(blas_core "$(sed -n 's/^# blas: //p' "$OUT/raw.loss" | sed -n 1p)") ||
	exit 1
if [ "$again" != "$core" ]; then
	echo "train_bench: train_raw ran core '${again}' under" \
		"OPENBLAS_CORETYPE=$core, not '$core'" >&2
	exit 1
fi

# 3. rounds
printf '%-6s %12s %12s %7s %6s\n' round raw_tok_s torch_tok_s ratio load
r=1
while [ "$r" -le "$ROUNDS" ]; do
	l=$(load)
	run_raw() {
		# shellcheck disable=SC2086
		"$RAW" $common --steps "$STEPS" --warmup "$WARMUP" >"$OUT/raw.$r"
	}
	run_torch() {
		# shellcheck disable=SC2086
		"$TORCH_PYTHON" "$TORCH" $common --steps "$STEPS" \
			--warmup "$WARMUP" --tokens "$OUT/tokens" >"$OUT/torch.$r"
	}
	if [ $((r % 2)) = 1 ]; then run_raw; run_torch; else run_torch; run_raw; fi
	a=$(value tokens_per_s_median_step "$OUT/raw.$r")
	b=$(value tokens_per_s_median_step "$OUT/torch.$r")
	echo "$a $b" >>"$OUT/rounds"
	printf '%-6s %12s %12s %7.3f %6s\n' "$r" "$a" "$b" \
		"$(echo "$a $b" | awk '{ print $1 / $2 }')" "$l"
	r=$((r + 1))
done
# shellcheck disable=SC2086
"$TORCH_PYTHON" "$TORCH" $common --steps 3 --warmup 2 --tokens "$OUT/tokens" \
	--profile >"$OUT/torch.profile"
awk -v n="$ROUNDS" '
	{ a[NR] = $1; b[NR] = $2; q[NR] = $1 / $2 }
	function med(x, f,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return sprintf(f " (" f "-" f ")", x[int((n + 1) / 2)], x[1], x[n])
	}
	END {
		print "median tokens/s, train_raw: " med(a, "%.1f")
		print "median tokens/s, PyTorch:   " med(b, "%.1f")
		print "ratio train_raw / PyTorch:  " med(q, "%.3f") "  (goal >= 1.0)"
	}' "$OUT/rounds"
echo "matmul share of a step: train_raw $(value matmul_share "$OUT/raw.1")" \
	"(in sgemm, $(value matmul_gflops "$OUT/raw.1") GFLOP/s)," \
	"PyTorch $(value matmul_share "$OUT/torch.profile")" \
	"(addmm, mm and bmm self time, profiled)"
echo "sgemm alone on one micro-batch's shapes (train_raw's replay):" \
	"$(value sgemm_replay_gflops "$OUT/raw.1") GFLOP/s"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# 4. the first steps' loss
# shellcheck disable=SC2086
"$TORCH_PYTHON" "$TORCH" $common --steps "$LOSS_STEPS" --tokens "$OUT/tokens" \
	>"$OUT/torch.loss"
# shellcheck disable=SC2086
"$TORCH_PYTHON" "$TORCH" $common --steps "$LOSS_STEPS" --tokens "$OUT/tokens" \
	--init "$OUT/init" >"$OUT/torch_init.loss"
floor=$(sed -n 's/.*loss_floor=\([0-9.]*\).*/\1/p' "$OUT/raw.loss")
echo "loss per step (floor $floor): train_raw, PyTorch own init, PyTorch from lib/train's init"
printf '%5s %10s %10s %10s %10s\n' step train_raw torch torch_lib lib-t_lib
for f in raw.loss torch.loss torch_init.loss; do
	awk -v n="$LOSS_STEPS" '$1 == "step" && $2 <= n { print $4 }' \
		"$OUT/$f" >"$OUT/$f.col"
done
paste "$OUT/raw.loss.col" "$OUT/torch.loss.col" "$OUT/torch_init.loss.col" |
	awk '{ printf "%5d %10.6f %10.6f %10.6f %10.2g\n", NR, $1, $2, $3, $1 - $3 }'
