#!/bin/sh
# nccl_nogpu.t - the NCCL plugin on a machine without a GPU or driver: it
# loads, and `shakedown run --backend nccl` says in one line that no CUDA
# device or driver was found, and exits 3; a test's env is checked against
# the plugin's table and the job's environment before that.  `shakedown
# train --backend nccl` (the training workload's GPU path) fails the same
# way, and the gradient faults it cannot plant are refused first.  On a machine
# with a GPU the checks are in test/gpu/check.sh instead.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

so="$top_builddir/plugins/nccl/.libs/backend_nccl.so"
[ -f "$so" ] || skip_all "NCCL plugin not built (configure found no CUDA/NCCL)"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	skip_all "this machine has a GPU; run test/gpu/check.sh"
fi

plan 26

# the plugin exports exactly the symbols the loader and `train` look up
# (the training table only where the build found cuBLAS)
syms=$(nm -D --defined-only "$so" | awk '$2 ~ /^[A-Z]$/ && $3 !~ /^_/ { print $3 }' | sort | tr '\n' ' ')
ok '[ "$syms" = "shakedown_backend " ] || [ "$syms" = "shakedown_backend shakedown_train_gpu " ]' \
	"backend_nccl.so exports shakedown_backend and at most shakedown_train_gpu ($syms)"

# train: the GPU path fails at the device, in one line, exit 3
run -t 60 "$SHAKEDOWN" train --backend nccl --local 1 --config test --db none
is "$rc" 3 "train --backend nccl without a GPU: exit 3"
is "$(printf '%s\n' "$err" | grep -c .)" 1 "train: one line on stderr"
like "$err" "^shakedown: no CUDA device or driver found on [^ ]+ \(cudaGetDeviceCount: [^)]+\); use --backend gloo on CPU-only nodes$" \
	"train: the line names the host, the CUDA error and the fix"
# the README's 1b command: the config is taken, the GPU is what is missing
run -t 60 "$SHAKEDOWN" train --local 8 --backend nccl --config 1b --steps 20 --db none
ok '[ "$rc" = 3 ] && printf "%s\n" "$err" | grep -q "no CUDA device or driver found on"' \
	"train --config 1b on 8 ranks without a GPU: exit 3 naming the device (exit $rc)"
run -t 60 "$SHAKEDOWN" train --backend nccl --local 2 --config test --db none
ok '[ "$rc" = 3 ] && [ "$err" = "$(printf "%s\n" "$err" | grep -E "^shakedown: ranks 0-1 \([^)]+\): no CUDA device or driver found on")" ]' \
	"train on two local ranks: exit 3, one line naming both ranks (exit $rc)"
SHAKEDOWN_FAULT=rank=0,kind=grad_nan run -t 60 "$SHAKEDOWN" train --backend nccl --local 1 --config test --db none
ok '[ "$rc" = 2 ] && printf "%s\n" "$err" | grep -q "gradient faults are planted on the CPU path only; use --backend gloo"' \
	"a gradient fault on the GPU path: exit 2, says why (exit $rc)"

run -t 60 "$SHAKEDOWN" run --backend nccl --local 1 --op all_reduce -b 8 -e 8 --db none
is "$rc" 3 "exit status 3 without a GPU"
is "$(printf '%s\n' "$err" | grep -c .)" 1 "one line on stderr"
like "$err" "^shakedown: no CUDA device or driver found on [^ ]+ \(cudaGetDeviceCount: [^)]+\); use --backend gloo on CPU-only nodes$" \
	"the line names the host, the CUDA error and the fix"
unlike "$err" "cannot load plugin" "the plugin itself loaded"

run -t 60 "$SHAKEDOWN" run --backend nccl --local 2 --op all_reduce -b 8 -e 8 --db none
is "$rc" 3 "two local ranks: exit status 3"
like "$err" "^shakedown: ranks 0-1 \([^)]+\): no CUDA device or driver found on" \
	"the ranks that met it and the host named"

# a failure every rank meets is said once, by rank 0, not once a rank
run -t 90 "$SHAKEDOWN" run --local 8 --backend nccl -b 8 -e 8 --db none
is "$rc" 3 "eight local ranks: exit status 3"
is "$(printf '%s\n' "$err" | grep -c .)" 1 "eight local ranks: one line, not eight"
like "$err" "^shakedown: ranks 0-7 \([^)]+\): no CUDA device or driver found on" \
	"the line names ranks 0-7 and the host"

# an op the plan cannot run on NCCL is refused before any device is
# touched (pt2pt needs 2 ranks: a usage error, not a device error)
run -t 60 "$SHAKEDOWN" run --backend nccl --local 1 --op pt2pt -b 8 -e 8 --db none
ok '[ "$rc" = 2 ] || [ "$rc" = 3 ]' "pt2pt on one rank: refused (exit $rc)"

run -t 60 "$SHAKEDOWN" run --backend nccl --local 1 -d fp8_e4m3 --op all_reduce -b 8 -e 8 --db none
is "$rc" 3 "fp8 is accepted by the plan; the missing GPU is what fails"

# a test's env: what NCCL takes per communicator passes the plugin's
# env_check (the missing GPU is what fails); what it reads once per
# process, or a variable the job's environment already sets to another
# value (NCCL would let that override the test's), stops the run with
# exit 2 before the plugin looks for a device
printf 'tests:\n  - op: all_reduce\n    env: {NCCL_MIN_CTAS: 2, NCCL_NET: Socket}\n' >"$TMPD/env.yaml"
printf 'tests:\n  - op: all_reduce\n    env: {NCCL_P2P_DISABLE: 1}\n' >"$TMPD/once.yaml"
nrun="run --backend nccl --local 1 -b 8 -e 8 --db none"
run -t 60 "$SHAKEDOWN" $nrun --plan "$TMPD/env.yaml"
is "$rc" 3 "NCCL_MIN_CTAS and NCCL_NET are taken; the missing GPU fails"
like "$err" "no CUDA device or driver found" "at the device, after the check"
run -t 60 env NCCL_MIN_CTAS=4 "$SHAKEDOWN" $nrun --plan "$TMPD/env.yaml"
is "$rc" 2 "the job sets NCCL_MIN_CTAS to another value: exit 2"
like "$err" "test 1 \(all_reduce\): env: NCCL_MIN_CTAS is also set in this process's environment \(4\), .* and NCCL lets that override the test's 2; unset it there or drop it from the test" \
	"names the test, both values and the fix"
unlike "$err" "no CUDA device" "before the device is looked for"
run -t 60 env NCCL_MIN_CTAS=2 "$SHAKEDOWN" $nrun --plan "$TMPD/env.yaml"
is "$rc" 3 "the job's same value is no conflict"
run -t 60 "$SHAKEDOWN" $nrun --plan "$TMPD/once.yaml"
is "$rc" 2 "NCCL_P2P_DISABLE in a test: exit 2"
like "$err" "once.yaml:3: env: NCCL_P2P_DISABLE is read once per process by NCCL, so a test cannot change it; set it in the job's environment instead" \
	"names the line, the variable, the reason and the fix"

done_testing
