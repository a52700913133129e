#!/bin/sh
# nccl_nogpu.t - the NCCL plugin on a machine without a GPU or driver: it
# loads, and `shakedown run --backend nccl` says in one line that no CUDA
# device or driver was found, and exits 3.  On a machine with a GPU the
# checks are in test/gpu/check.sh instead.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

so="$top_builddir/plugins/nccl/.libs/backend_nccl.so"
[ -f "$so" ] || skip_all "NCCL plugin not built (configure found no CUDA/NCCL)"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	skip_all "this machine has a GPU; run test/gpu/check.sh"
fi

plan 9

# the plugin exports exactly the one symbol the loader looks up
syms=$(nm -D --defined-only "$so" | awk '$2 ~ /^[A-Z]$/ && $3 !~ /^_/ { print $3 }' | sort | tr '\n' ' ')
is "$syms" "shakedown_backend " "backend_nccl.so exports only shakedown_backend"

run -t 60 "$SHAKEDOWN" run --backend nccl --local 1 --op all_reduce -b 8 -e 8 --db none
is "$rc" 3 "exit status 3 without a GPU"
is "$(printf '%s\n' "$err" | grep -c .)" 1 "one line on stderr"
like "$err" "^shakedown: no CUDA device or driver found on [^ ]+ \(cudaGetDeviceCount: [^)]+\); use --backend gloo on CPU-only nodes$" \
	"the line names the host, the CUDA error and the fix"
unlike "$err" "cannot load plugin" "the plugin itself loaded"

run -t 60 "$SHAKEDOWN" run --backend nccl --local 2 --op all_reduce -b 8 -e 8 --db none
is "$rc" 3 "two local ranks: exit status 3"
like "$err" "rank [01] \([^)]+\): no CUDA device or driver found on" \
	"each rank names itself and the host"

# an op the plan cannot run on NCCL is refused before any device is
# touched (pt2pt needs 2 ranks: a usage error, not a device error)
run -t 60 "$SHAKEDOWN" run --backend nccl --local 1 --op pt2pt -b 8 -e 8 --db none
ok '[ "$rc" = 2 ] || [ "$rc" = 3 ]' "pt2pt on one rank: refused (exit $rc)"

run -t 60 "$SHAKEDOWN" run --backend nccl --local 1 -d fp8_e4m3 --op all_reduce -b 8 -e 8 --db none
is "$rc" 3 "fp8 is accepted by the plan; the missing GPU is what fails"

done_testing
