#!/bin/sh
# device.sh - the device call's command, THERE, from the repository root:
# unpack the bundle that test/gpu/bundle.sh made HERE (.gpu-bundle, carried
# by the call) and run it.  Nothing is built there.
#
#   run  command:   sh test/gpu/device.sh
#        carry:     [".gpu-bundle"]
#        timeout_s: 480
#
# It says which commit the bundle was made from (and warns when the tree
# that travelled is another), unpacks the tarball into SD_GPU_DIR (default
# a fresh folder under /tmp) and starts its run.sh (kit/run.sh: find CUDA,
# cuBLAS and NCCL, prove the closure, then kit/check.sh), which leaves its
# results in $OUT.  The rehearsal on a bare root (test/gpu/rehearse.sh)
# runs this same script with SD_GPU_DRY=1.
#
# Exit: run.sh's (0 every step passed, 1 a step failed, 3 the machine
# lacks what the bundle needs); 2 when there is no bundle to run.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tgz=${SD_GPU_BUNDLE:-$top/.gpu-bundle/shakedown-gpu.tar.gz}
if [ ! -f "$tgz" ]; then
	echo "device: no bundle at $tgz: run test/gpu/bundle.sh here first and carry .gpu-bundle" >&2
	exit 2
fi
dir=${SD_GPU_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/shakedown-gpu.XXXXXX")}
mkdir -p "$dir"
t0=$(date +%s)
tar -xzf "$tgz" -C "$dir" || { echo "device: cannot unpack $tgz into $dir" >&2; exit 2; }
made=$(sed -n 's/^commit: //p' "$dir/shakedown-gpu/MANIFEST")
here=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo "")
echo "device: bundle $(du -k "$tgz" | cut -f1) KiB, made from $made, unpacked into $dir in $(( $(date +%s) - t0 )) s"
case $made in
"$here"*) ;;
*) [ -n "$here" ] && echo "device: note: the tree here is at $here, the bundle was made from $made: what runs is the bundle's" ;;
esac
OUT=${OUT:-$top/gpu-out}
export OUT
exec sh "$dir/shakedown-gpu/run.sh"
