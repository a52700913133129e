#!/bin/sh
# check.sh - prove the NCCL backend on a machine with at least one NVIDIA
# GPU: build everything, then run every op, data type and reduction on one
# GPU with one rank, the wrong-data, timeout/abort and memory-cap paths,
# the device and link report, shakedown gemm through cuBLAS (every type
# checked, fp8 by compute capability, the peak, wrong math and a slow
# GPU), and (with two GPUs or more) every op on two ranks.  Needs the CUDA toolkit and NCCL (configure --enable-nccl=yes).
# Then the training workload's GPU path (shakedown train --backend nccl):
# the test and default configs for 100 steps against the shipped CPU
# curves, a finite and falling loss, tgs and TFLOPs recomputed from the
# database rows, MFU against the table's bf16 peak, PyTorch eager's
# tokens/s on the same GPU and config beside shakedown's, two ranks on one
# GPU refused (about 30-60 s together, unmeasured).
#
# Usage: test/gpu/check.sh            (from anywhere; builds in the tree)
# Env:   SD_GPU_CHECK_PART  all (default); base: all but the training
#                           checks (device.sh's check step); train: only
#                           those, on the tree already built (device.sh's
#                           train step, so SD_DEVICE_STEPS can leave it out)
# Speaks TAP on stdout (test/system/lib.sh): one "ok N - name" or
# "not ok N - name" per check, the plan at the end.  The same stream and the
# last 60 lines of every command's output go to $OUT/gpu-check.log when OUT
# is set (else ./gpu-check.log).  Exits 0 when every check passed, 1
# otherwise.  No GPU visible is "1..0 # SKIP ..." but exit 1: a GPU check
# that saw no GPU proved nothing.  About 2-3 minutes on one H200, most of it
# the build.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
top_srcdir=$top top_builddir=$top
. "$top/test/system/lib.sh"
part=${SD_GPU_CHECK_PART:-all}
case $part in all | base | train) ;; *) echo "check.sh: SD_GPU_CHECK_PART is all, base or train, not '$part'" >&2; exit 2 ;; esac
if [ "$part" = train ]; then
	log="${OUT:-$top}/gpu-train.log"
else
	log="${OUT:-$top}/gpu-check.log"
fi
mkdir -p "$(dirname "$log")"
: >"$log"
# stdout (the TAP stream) goes to the terminal and to the log
mkfifo "$TMPD/tap" || bail_out "cannot make a FIFO in $TMPD"
tee -a "$log" <"$TMPD/tap" &
tee_pid=$!
exec >"$TMPD/tap"
at_exit 'exec >&-; wait $tee_pid'
step_out=$TMPD/step.out

# step NAME WANT_RC [GREP] -- CMD...: run, log, compare the exit status and
# (optionally) look for an extended regex in stdout+stderr
step() {
	name=$1 want=$2 pat=$3
	shift 4
	diag "---- $name: $*"
	start=$(date +%s)
	timeout -k 10 300 "$@" >"$step_out" 2>&1
	rc=$?
	tail -n 60 "$step_out" >>"$log"
	diag "     exit $rc (want $want), $(( $(date +%s) - start )) s"
	st=0
	[ "$rc" = "$want" ] || st=1
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$step_out"; then
		diag "     no match for /$pat/"
		st=1
	fi
	if [ "$st" = 0 ]; then pass "$name"; else fail "$name"; fi
}

diag "shakedown GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi -L 2>&1 | sed 's/^/# /'
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
gpuname=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
diag "GPUs: $ngpu, compute capability ${cc:-?}, $gpuname"
if [ "${ngpu:-0}" -lt 1 ]; then
	echo "1..0 # SKIP no GPU visible to nvidia-smi"
	exit 1
fi

# -- build -------------------------------------------------------------
if [ "$part" = train ]; then
	: # device.sh's make step built it
elif [ ! -f Makefile ]; then
	step "autoreconf" 0 "" -- autoreconf -fi
	step "configure --enable-nccl=yes" 0 "NCCL plugin +yes" -- \
		./configure --enable-nccl=yes
fi
if [ "$part" != train ]; then
	step "make" 0 "" -- make -j"$(nproc)"
	step "plugin built" 0 "" -- test -f plugins/nccl/.libs/backend_nccl.so
	step "unit tests" 0 "" -- \
		make check TESTS="test/unit/unit_nccl test/unit/unit_nccl_links"
fi
[ -x src/shakedown ] || bail_out "src/shakedown not built"

export SHAKEDOWN_PLUGIN_DIR="$top/plugins/nccl/.libs"
sd="$top/src/shakedown"
common="--backend nccl --db none --no-progress -c 1 -n 5 -w 2 --timeout 60"

# -- the training workload's GPU path ------------------------------------
# The loss is judged against the shipped CPU curves (fp32, OpenBLAS, made
# by --save-ref on the development machine): 1 rank with 4 (test) or 8
# (default) times the accumulation sees exactly the global batch of their
# 2 and 4 ranks, so the config strings match.  The tolerance is the loss
# check's: per step |gpu - cpu| <= 0.05 x cpu, and the variance of the
# difference <= 0.01 nat^2.  Why that is enough room for bf16 and no
# more: bf16 keeps 8 significant bits, a relative 2^-8 = 0.4% per GEMM
# input, whose errors largely average out over the K-long fp32 sums;
# everything else is fp32, so the two curves start from the same weights
# and the same data and part only by that rounding, compounded over the
# steps: expected well under 5%, while a wrong kernel (a missing mask, a
# wrong transpose, a lost gradient) leaves the loss near ln 256 = 5.55 or
# sends it elsewhere at once.  sqlite3 may not be on the GPU machine:
# the rows are read through python3's sqlite3.
train_checks() {
	DB=$TMPD/train.db
	SQ() {
		python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in r))' "$DB" "$1"
	}
	trn="$sd train --backend nccl --local 1 --no-progress --db $DB --timeout 60"
	for cfgname in test default; do
		case $cfgname in
		test) accum=4 fall=0.5 ;;
		default) accum=8 fall=3 ;;
		esac
		step "train: $cfgname config on the GPU, 100 steps, loss against the CPU curve gpt-$cfgname-cpu (exit 0)" 0 \
			"loss check +100 steps compared: .*: passed" -- \
			$trn --config $cfgname --accum $accum --steps 100 \
			--reference gpt-$cfgname-cpu
		out=$TMPD/train-$cfgname.out
		cp "$step_out" "$out"
		sed 's/^/# /' "$out"
		ok 'grep -q "^# GPU path: bf16 GEMMs through cuBLAS" "$out" &&
			grep -qF "backend nccl ($gpuname)" "$out"' \
			"train $cfgname: the GPU path ran on $gpuname"
		u=$(sed -n 's/.*(run \([0-9a-f-]\{36\}\)).*/\1/p' "$out" | head -n 1)
		# every step's loss finite (SQLite stores a NaN as NULL), and
		# falling: the last at least $fall nats under the first
		ok '[ "$(SQ "SELECT count(s.loss), sum(abs(s.loss) < 1e30),
			(SELECT loss FROM train_steps t WHERE t.run_id = s.run_id AND t.rank IS NULL AND t.step = 1)
			- (SELECT loss FROM train_steps t WHERE t.run_id = s.run_id AND t.rank IS NULL AND t.step = 100) > $fall
			FROM train_steps s JOIN runs r ON r.id = s.run_id
			WHERE r.uuid = '"'"'$u'"'"' AND s.rank IS NULL")" = "100|100|1" ]' \
			"train $cfgname: 100 finite losses, falling by more than $fall nats"
		# the curve against the CPU curve's file itself, step by step,
		# not through the loss check's code
		ref=plans/reference/gpt-$cfgname-cpu.ref
		SQ "SELECT s.step, s.loss FROM train_steps s JOIN runs r ON r.id = s.run_id
		    WHERE r.uuid = '$u' AND s.rank IS NULL ORDER BY s.step" |
			tr '|' ' ' >"$TMPD/gpu-$cfgname.curve"
		worst=$(awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) cpu[$1] = $2; next }
			($1 in cpu) { d = ($2 - cpu[$1]) / cpu[$1]; if (d < 0) d = -d
				if (d > w) { w = d; at = $1 }; n++ }
			END { printf "%d %.4f %d", n, w, at }' "$ref" "$TMPD/gpu-$cfgname.curve")
		diag "train $cfgname: steps compared, largest |gpu - cpu| / cpu, at step: $worst"
		ok 'echo "$worst" | awk "{ exit !(\$1 == 100 && \$2 <= 0.05) }"' \
			"train $cfgname: all 100 steps within 5% of the CPU curve ($worst)"
		# tgs and TFLOPs recomputed from the rows (1 device)
		tgs_out=$(sed -n 's/^  tgs  *\([0-9.]*\) .*/\1/p' "$out")
		tf_out=$(sed -n 's/^  TFLOPs\/device  *\([0-9.]*\) .*/\1/p' "$out")
		diag "train $cfgname: tgs $tgs_out, TFLOPs/device $tf_out"
		ok '[ -n "$tgs_out" ] && [ "$(SQ "SELECT printf('"'"'%.1f'"'"', sum(s.tokens * s.span_steps) / sum(s.step_s * s.span_steps))
			FROM train_steps s JOIN runs r ON r.id = s.run_id
			WHERE r.uuid = '"'"'$u'"'"' AND s.rank IS NULL AND s.timed")" = "$tgs_out" ]' \
			"train $cfgname: tgs from the step rows is the printed $tgs_out"
		ok '[ -n "$tf_out" ] && [ "$(SQ "SELECT printf('"'"'%.4f'"'"', t.flops_per_token * sum(s.tokens * s.span_steps)
			/ sum(s.step_s * s.span_steps) / 1e12)
			FROM train_steps s JOIN runs r ON r.id = s.run_id JOIN train_runs t ON t.run_id = r.id
			WHERE r.uuid = '"'"'$u'"'"' AND s.rank IS NULL AND s.timed")" = "$tf_out" ]' \
			"train $cfgname: TFLOPs from the rows and flops_per_token is the printed $tf_out"
		ok 'grep -Eq "MFU +[0-9.]+% of [0-9.e]+ TFLOPs \(table" "$out"' \
			"train $cfgname: MFU against the peak table's bf16 peak of $gpuname"
	done
	# PyTorch eager on the same GPU and configuration (bf16 autocast,
	# bench/torch_gpt.py --device cuda), for the record: its tokens/s
	# beside shakedown's tgs of the default run just above; it passes
	# when it ran (the ratio is a number to report, not a verdict).
	# SD_GPU_TORCH=0 leaves it out.
	if [ "${SD_GPU_TORCH:-1}" = 0 ]; then
		skip 1 "SD_GPU_TORCH=0: no PyTorch comparison"
	elif python3 -c 'import numpy, torch; assert torch.cuda.is_available()' 2>/dev/null; then
		step "train: PyTorch eager bf16 on the same GPU, default config" 0 \
			"^tokens_per_s_median_step " -- \
			python3 bench/torch_gpt.py --device cuda --config default \
			--accum-steps 8 --steps 30 --warmup 5
		torch_tps=$(sed -n 's/^tokens_per_s_median_step //p' "$step_out")
		diag "train default: shakedown tgs ${tgs_out:-?} tokens/s, PyTorch eager bf16 ${torch_tps:-?} tokens/s (median step), ratio $(awk -v a="${tgs_out:-0}" -v b="${torch_tps:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')"
	else
		skip 1 "python3 has no torch with CUDA here: no PyTorch comparison"
	fi
	# NCCL takes one GPU per rank: two ranks on one are refused
	step "train: two ranks on one GPU are refused (exit 3)" 3 "both use GPU" -- \
		env CUDA_VISIBLE_DEVICES=0 $sd train --backend nccl --local 2 \
		--config test --steps 5 --db none --timeout 60
	if [ "$ngpu" -ge 2 ]; then
		step "train: 2 GPUs, gradients all-reduced by NCCL, against gpt-test-cpu (exit 0)" 0 \
			"loss check +100 steps compared: .*: passed" -- \
			$sd train --backend nccl --local 2 --config test --accum 2 \
			--steps 100 --reference gpt-test-cpu --db none --timeout 60
	else
		skip 1 "one GPU: the 2-rank training run needs two"
	fi
}
if [ "$part" = train ]; then
	train_checks
	tap_summary
	done_testing
fi

# -- device and links --------------------------------------------------
step "link facts (nccl_links)" 0 "^socket " -- plugins/nccl/nccl_links
step "device report (json)" 0 "$gpuname" -- \
	"$sd" run --local 1 $common --op all_reduce -b 8 -e 1M --format json
step "topo: the GPU and its links (describe_links through NVML)" 0 \
	'"links"' -- "$sd" topo --local 1 --backend nccl --format json

# -- every op, type and reduction on one GPU ---------------------------
types="int8,uint8,int32,uint32,int64,uint64,float16,bfloat16,float32,float64"
case "$cc" in
9.* | [1-9][0-9].*) types="$types,fp8_e4m3,fp8_e5m2" ;;
*) diag "compute capability $cc: fp8 left out (needs 9.0)" ;;
esac
for op in all_reduce reduce_scatter reduce; do
	step "1 rank: $op, every type and reduction" 0 "" -- \
		"$sd" run --local 1 $common --op $op -d "$types" -o all \
		-b 8 -e 64M -f 8
done
for op in all_gather all_to_all broadcast gather scatter sendrecv; do
	step "1 rank: $op, every type" 0 "" -- \
		"$sd" run --local 1 $common --op $op -d "$types" -b 8 -e 64M -f 8
done
step "1 rank: per-iteration percentiles (CUDA events)" 0 \
	"per iteration \(us\): min [0-9.]+ p50 [0-9.]+ p99 [0-9.]+ max" -- \
	"$sd" run --local 1 $common --op all_reduce -b 1M -e 256M -f 4 --per-iter
# every percentile line is ordered: 0 < min <= p50 <= p99 <= max
percentiles_ordered() {
	awk '/per iteration \(us\):/ { n++
		if (!($9 > 0 && $9 <= $11 && $11 <= $13 && $13 <= $15)) bad++ }
		END { exit !(n > 0 && bad == 0) }' "$1"
}
ok 'percentiles_ordered "$step_out"' \
	"per-iteration percentiles are ordered (min <= p50 <= p99 <= max)"

# -- failures are caught -----------------------------------------------
step "wrong data is counted on the GPU (exit 1)" 1 "wrong" -- \
	env SHAKEDOWN_FAULT="rank=0,kind=corrupt,index=3" \
	"$sd" run --local 1 $common --op all_reduce -d float32 -b 1M -e 1M
step "a hung GPU times out, aborts NCCL, names rank/host/GPU (exit 4)" 4 \
	"rank 0 on .*GPU [0-9]+ \(.*\).*did not complete within .*aborted" -- \
	env SHAKEDOWN_NCCL_FAULT=hang=0 \
	"$sd" run --local 1 --backend nccl --db none --no-progress \
	--op all_reduce -b 1M -e 1M -n 5 -w 1 --timeout 5
step "a stalled rank times out (exit 4)" 4 "" -- \
	env SHAKEDOWN_FAULT="rank=0,kind=stall" \
	"$sd" run --local 1 --backend nccl --db none --no-progress \
	--op all_reduce -b 1M -e 1M -n 5 -w 1 --timeout 5
step "sizes beyond GPU memory are capped with a hint (exit 3)" 3 \
	"largest size that fits is .*pass -e" -- \
	"$sd" run --local 1 $common --op all_reduce -d float32 -b 1T -e 1T
step "two ranks on one GPU are refused (exit 3)" 3 "both use GPU" -- \
	env CUDA_VISIBLE_DEVICES=0 \
	"$sd" run --local 2 $common --op all_reduce -b 8 -e 1K

# -- a test's env reaches NCCL as ncclConfig_t fields -------------------
# (NCCL logs each field a config sets: init.cc parseCommConfig)
printf 'tests:\n  - {op: all_reduce, max_bytes: 1M}\n  - {op: all_reduce, max_bytes: 1M, env: {NCCL_MIN_CTAS: 2, NCCL_MAX_CTAS: 4}}\n' \
	>"$TMPD/env.yaml"
step "a test's env is its communicator's ncclConfig_t" 0 \
	"Comm config Min CTAs set to 2" -- \
	env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV \
	"$sd" run --local 1 $common --plan "$TMPD/env.yaml"

# -- shakedown gemm: cuBLAS on the GPU, every product checked ------------
gemm="--backend nccl --db none --timeout 120"
step "gemm: every type over the default sweep, right math (exit 0)" 0 \
	"bf16 .* passed" -- "$sd" gemm --local 1 $gemm --dtype all -v
step "gemm: JSON lines, one per product and per device and type" 0 \
	'"kind":"gemm_device"' -- "$sd" gemm --local 1 $gemm --dtype all \
	--sizes 512,4096 --width 1024 --tokens 4096 --format json
ok '! grep "\"kind\":\"gemm\"," "$step_out" | grep -v "\"not_here\"" |
	grep -v "\"wrong\":0,"' "gemm: no product of any type has a wrong element"
ok '! grep "\"kind\":\"gemm\"," "$step_out" | grep -v "\"not_here\"" |
	grep "\"checked\":0,"' "gemm: every product was checked"
case $cc in
8.0|8.6|8.7)
	step "gemm: fp8 is not on this device below 8.9 (exit 2)" 2 \
		"fp8 needs compute capability 8.9" -- \
		"$sd" gemm --local 1 $gemm --dtype fp8 --sizes 512 --width 0 ;;
*)
	step "gemm: fp8 runs on compute capability $cc" 0 "fp8 .* passed" -- \
		"$sd" gemm --local 1 $gemm --dtype fp8 --sizes 4096 --width 0 ;;
esac
case $gpuname in
*H100*|*H200*)
	# dense bf16 peak 989 TFLOPs (SXM): a healthy GPU is above half
	step "gemm: bf16 above half of the H100/H200 peak" 0 "bf16 .* passed" -- \
		"$sd" gemm --local 1 $gemm --dtype bf16 --peak-tflops bf16=989 ;;
*) skip 1 "not an H100 or H200: no peak to hold it to" ;;
esac
step "gemm: wrong math is caught (exit 1)" 1 "wrong math" -- \
	env SHAKEDOWN_FAULT="rank=0,kind=corrupt,index=7" \
	"$sd" gemm --local 1 $gemm --dtype bf16 --sizes 512 --width 0
step "gemm: a slow GPU is below its peak (exit 6)" 6 \
	"below 0.50 of its peak" -- \
	env SHAKEDOWN_FAULT="rank=0,kind=slow,delay_us=20000" \
	"$sd" gemm --local 1 $gemm --dtype bf16 --sizes 4096 --width 0 \
	--peak-tflops 100
if [ "$ngpu" -ge 2 ]; then
	step "gemm: 2 GPUs at once, a slow one named by its peers (exit 6)" 6 \
		"FAILED rank 1 .*peer median" -- \
		env SHAKEDOWN_FAULT="rank=1,kind=slow,delay_us=20000" \
		"$sd" gemm --local 2 $gemm --dtype bf16 --sizes 4096 --width 0
else
	skip 1 "one GPU: no peers for gemm"
fi

# -- two GPUs: every op across ranks -----------------------------------
ops2="all_reduce all_gather reduce_scatter all_to_all broadcast reduce gather
scatter sendrecv pt2pt"
if [ "$ngpu" -ge 2 ]; then
	for op in $ops2; do
		step "2 ranks: $op" 0 "" -- \
			"$sd" run --local 2 $common --op $op -d float32,bfloat16 \
			-o sum,avg -b 8 -e 64M -f 8
	done
	# a split of the test's communicator keeps its fields: 2 ranks x
	# (the fresh communicator + its split) = 4 config lines
	printf 'tests:\n  - {op: all_reduce, max_bytes: 1M, scope: split:1, env: {NCCL_MIN_CTAS: 2}}\n' \
		>"$TMPD/envsplit.yaml"
	step "2 ranks: a split keeps the test's ncclConfig_t" 0 \
		"Comm config Min CTAs set to 2" -- \
		env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV \
		"$sd" run --local 2 $common --plan "$TMPD/envsplit.yaml"
	ok '[ "$(grep -c "Comm config Min CTAs set to 2" "$step_out")" -ge 4 ]' \
		"the fresh communicator and its split both got minCTAs 2"
else
	skip "$(( $(echo $ops2 | wc -w) + 2 ))" "one GPU: the 2-rank runs need two"
fi

[ "$part" = all ] && train_checks

tap_summary
done_testing
