#!/bin/sh
# run.sh - the GPU kit's entry point, inside an unpacked bundle
# (test/gpu/bundle.sh made it; bundle/run.sh calls this kit/run.sh).  On the
# GPU machine (test/gpu/device.sh unpacks the bundle and starts it) or on a
# bare root without a GPU (test/gpu/rehearse.sh, SD_GPU_DRY=1):
#
#   facts    the machine: glibc, cores, the GPU, driver, compute capability
#            and memory (nvidia-smi), python3 and torch (for the peers)
#   libs     CUDA runtime, cuBLAS and NCCL found from what is there: the
#            toolkit (/usr/local/cuda/lib64 and its targets/ folder), the
#            pip wheels (nvidia/nccl/lib, nvidia/cu13/lib, nvidia/cublas/lib
#            and nvidia/cuda_runtime/lib under any site-packages), the
#            system's; SD_CUDA_LIB and SD_NCCL_LIB name folders to use
#            first.  The driver (libcuda.so.1) from the loader's cache or
#            /usr/local/nvidia/lib64.  Each library's version and path as
#            loaded (kit/gpu_libs); a missing one: one line, exit 3.
#   glibc    the newest GLIBC_ version the bundle needs (MANIFEST) against
#            this machine's: older here is one line, exit 3
#   closure  kit/closure.sh over the bundle with that LD_LIBRARY_PATH:
#            every library resolves (else its lines, exit 3)
#   check    kit/check.sh, every step a TAP line and a JSON line
#
# What it leaves in $OUT (at most 8 files, as the device call returns):
#   device.log     everything printed
#   steps.jsonl    one JSON object per step: step, ok, rc, want, secs,
#                  figure, peer, ratio, proves
#   summary.md     the table: step, ok / not ok, figure, ratio to the peer
#   shakedown.db   the SQLite file every recorded run went to
#   nccl_bench.md  shakedown beside nccl-tests (-g 1), when that step ran
#   gemm.jsonl, train.txt: the gemm products and the training runs' output
#
# The whole run is held to SD_GPU_BUDGET seconds (default 420: the device
# call's 8 minutes less a margin); check.sh gives each step what is left.
# Exit: 0 when every step passed; 1 when one failed; 3 when the machine
# lacks what the bundle needs (libraries, glibc).
#
# Env: OUT (default /tmp/sd-gpu-out), SD_GPU_BUDGET, SD_GPU_DRY=1 (no GPU:
#      the steps up to the first CUDA call), SD_CUDA_LIB, SD_NCCL_LIB,
#      SD_GPU_STEPS (check.sh's groups to run, default all)
set -u
kit=$(cd "$(dirname "$0")" && pwd -P)
B=$(dirname "$kit")
OUT=${OUT:-/tmp/sd-gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
budget=${SD_GPU_BUDGET:-420}
log=$OUT/device.log

# -- the outer shell: the inner one under timeout, its output to the log,
# then the summary table from steps.jsonl (even after a timeout) ---------
if [ -z "${SD_RUN_INNER:-}" ]; then
	: >"$log"
	: >"$OUT/steps.jsonl"
	start=$(date +%s)
	{
		rc=0
		SD_RUN_INNER=1 SD_RUN_START=$start OUT=$OUT \
			timeout -k 10 "$budget" sh "$0" "$@" || rc=$?
		echo "$rc" >"$OUT/.rc"
	} 2>&1 | tee -a "$log"
	rc=$(cat "$OUT/.rc" 2>/dev/null || echo 1)
	rm -f "$OUT/.rc"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "run: the budget of $budget s ran out: the steps not in the table did not run" | tee -a "$log"
		rc=1
	fi
	sh "$kit/check.sh" --summary "$OUT/steps.jsonl" "$(( $(date +%s) - start ))" \
		>"$OUT/summary.md" 2>&1 || true
	cat "$OUT/summary.md" | tee -a "$log"
	exit "$rc"
fi

# -- the inner shell -----------------------------------------------------
say() { echo "run: $*"; }
refuse() { echo "run: cannot run here: $*"; exit 3; }
dry=${SD_GPU_DRY:-}
say "shakedown GPU kit, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null), budget $budget s${dry:+, DRY: no GPU expected}"
sed -n '1,7p' "$B/MANIFEST" | sed 's/^/run: bundle: /'
say "machine: $(uname -srm); $(nproc) cores; $(ldd --version 2>&1 | head -n 1)"
if [ -z "$dry" ]; then
	if command -v nvidia-smi >/dev/null 2>&1; then
		nvidia-smi -L 2>&1 | sed 's/^/run: /'
		say "GPU: $(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,pstate,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | head -n 1)"
	else
		say "nvidia-smi not found"
	fi
fi

# -- glibc ---------------------------------------------------------------
need=$(sed -n 's/^newest glibc symbol version needed: GLIBC_\([0-9.]*\)$/\1/p' "$B/MANIFEST")
have=$(ldd --version 2>&1 | head -n 1 | sed 's/.* \([0-9][0-9]*\.[0-9][0-9]*\)$/\1/')
if [ -n "$need" ] && [ -n "$have" ]; then
	low=$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)
	[ "$low" = "$need" ] ||
		refuse "the bundle needs glibc $need, this machine has $have: build the bundle on a machine with glibc $have or older"
	say "glibc: the bundle needs $need, here $have"
fi

# -- libraries -----------------------------------------------------------
# site-packages folders without importing anything heavy
sites=""
for p in python3 /opt/*/.venv/bin/python3 /usr/bin/python3; do
	command -v "$p" >/dev/null 2>&1 || continue
	s=$(timeout 20 "$p" -c 'import site, sysconfig
print(" ".join(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]))' 2>/dev/null) || continue
	sites="$sites $s"
done
for s in /opt/*/.venv/lib/python3*/site-packages /usr/local/lib/python3*/dist-packages \
	/usr/local/lib/python3*/site-packages /usr/lib/python3/dist-packages; do
	[ -d "$s" ] && sites="$sites $s"
done
wheel_dirs() { # SUBFOLDER...: that folder of each site-packages with it
	for s in $sites; do for sub in "$@"; do
		[ -d "$s/nvidia/$sub" ] && echo "$s/nvidia/$sub"
	done; done
}
toolkit=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib; do
	[ -d "$d" ] && toolkit="$toolkit $d"
done
sysdirs="/usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/lib"
# find SONAME DIR...: the first folder that has it
find_lib() {
	so=$1; shift
	for d in "$@"; do [ -e "$d/$so" ] && { echo "$d"; return 0; }; done
	return 1
}
cudart=$(find_lib libcudart.so.13 ${SD_CUDA_LIB:-} $toolkit $(wheel_dirs cu13/lib cuda_runtime/lib) $sysdirs) ||
	refuse "the CUDA 13 runtime (libcudart.so.13) is not in ${SD_CUDA_LIB:-} $toolkit, the nvidia wheels or $sysdirs: set SD_CUDA_LIB=DIR"
cublas=$(find_lib libcublas.so.13 ${SD_CUDA_LIB:-} $toolkit $(wheel_dirs cu13/lib cublas/lib) $sysdirs) ||
	refuse "cuBLAS 13 (libcublas.so.13) is not in ${SD_CUDA_LIB:-} $toolkit, the nvidia wheels or $sysdirs: set SD_CUDA_LIB=DIR"
find_lib libcublasLt.so.13 "$cublas" >/dev/null ||
	refuse "$cublas has libcublas.so.13 but no libcublasLt.so.13: set SD_CUDA_LIB to a folder with both"
nccl=$(find_lib libnccl.so.2 ${SD_NCCL_LIB:-} $(wheel_dirs nccl/lib) $toolkit $sysdirs) ||
	refuse "NCCL (libnccl.so.2) is not in ${SD_NCCL_LIB:-} the nvidia-nccl wheel (nvidia/nccl/lib), $toolkit or $sysdirs: set SD_NCCL_LIB=DIR"
driver=""
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	driver=$(find_lib libcuda.so.1 /usr/local/nvidia/lib64 /usr/local/nvidia/lib $sysdirs) || driver=""
fi
ld=""
for d in "$nccl" "$cudart" "$cublas" $driver; do
	case ":$ld:" in *":$d:"*) ;; *) ld=${ld:+$ld:}$d ;; esac
done
SD_ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
export SD_ORIG_LD_LIBRARY_PATH
LD_LIBRARY_PATH=$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
say "LD_LIBRARY_PATH for shakedown and nccl-tests: $ld (python3 runs with the machine's own)"
libs=$("$kit/gpu_libs" 2>&1) || {
	echo "$libs" | sed 's/^/run: /'
	refuse "a library the NCCL plugin links did not load (above)"
}
echo "$libs" | sed 's/^/run: loaded: /'
SD_NCCL_DIR=$nccl
export SD_NCCL_DIR
if [ -z "$dry" ] && echo "$libs" | grep -q '^cuda-driver *missing'; then
	refuse "the CUDA driver (libcuda.so.1) is not in the loader's cache nor /usr/local/nvidia/lib64: is this a GPU machine?"
fi

# -- closure -------------------------------------------------------------
closure_rc=0
closure=$(sh "$kit/closure.sh" "$B" 2>&1) || closure_rc=$?
echo "$closure" | sed 's/^/run: /'
[ "$closure_rc" = 0 ] ||
	refuse "the bundle's libraries do not all resolve here (closure lines above)"

# -- the checks ----------------------------------------------------------
left=$(( budget - ($(date +%s) - ${SD_RUN_START:-$(date +%s)}) - 5 ))
say "check.sh, $left s left"
SD_BUNDLE=$B OUT=$OUT SD_CHECK_DEADLINE=$(( $(date +%s) + left )) sh "$kit/check.sh"
