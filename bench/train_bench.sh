#!/bin/sh
# train_bench.sh - the training workload's CPU model (lib/train/, timed by
# bench/train_raw) against the same model and configuration in PyTorch
# eager (bench/torch_gpt.py), one thread each, in one sitting:
#
#   1. the kernels: lib/train picks OpenBLAS's kernels for this CPU itself
#      (sd_blas_tune); PyTorch uses the same Debian OpenBLAS and gets the
#      same kernels through OPENBLAS_CORETYPE, so both multiply alike;
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
common="--config $CONFIG $EXTRA"
value() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
load() { cut -d' ' -f1 /proc/loadavg; }

# 1. kernels
# shellcheck disable=SC2086
core=$("$RAW" $common --steps 1 | sed -n 's/^# blas: .*, \([A-Za-z0-9_]*\) kernels.*/\1/p')
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
[ -n "$core" ] && export OPENBLAS_CORETYPE="$core"
echo "# train_bench: config $CONFIG${EXTRA:+ $EXTRA}, $STEPS steps a run ($WARMUP untimed), $ROUNDS rounds"
echo "# OpenBLAS kernels for both: ${core:-as chosen at load}; $(getconf _NPROCESSORS_ONLN) cores; $(uname -r)"

# 2. data and start
dump=$STEPS
[ "$LOSS_STEPS" -gt "$dump" ] && dump=$LOSS_STEPS
# shellcheck disable=SC2086
"$RAW" $common --steps "$dump" --warmup "$WARMUP" --dump-tokens "$OUT/tokens" \
	--dump-init "$OUT/init" >"$OUT/raw.loss"
grep '^#' "$OUT/raw.loss"

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
