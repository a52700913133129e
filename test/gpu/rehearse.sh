#!/bin/sh
# rehearse.sh - rehearse the device call HERE, on a bare root: a minimal
# Debian (debootstrap --variant=minbase: no SQLite, libyaml, Jansson,
# Gloo, libcurl or OpenBLAS, no compiler, no python3) with only this
# machine's CUDA toolkit bind-mounted at /usr/local/cuda and NCCL laid out
# as the nvidia-nccl-cu13 wheel lays it out (a site-packages folder's
# nvidia/nccl/lib/libnccl.so.2).  In that root, the bundle's tarball and
# test/gpu/device.sh are placed as the device call places them, and
# device.sh runs with SD_GPU_DRY=1: unpack, find CUDA, cuBLAS and NCCL, say
# their versions, prove the closure, then every check up to the first CUDA
# call (version, a shipped plan by name, a 2-rank Gloo run, the CPU
# training run against the shipped reference, sqlite3 on the results, and
# run, gemm, train and topo with --backend nccl each exiting 3 in one line).
# So what the bundle forgot to carry fails here, not on the lent GPU.
#
# The root is made once (about 40 s and 200 MB from Debian's archive) and
# kept in SD_MINBASE (default /var/tmp/shakedown-minbase-bookworm); each
# rehearsal runs on a throw-away overlay over it, in a private mount and
# network namespace (loopback only).
#
# Usage: test/gpu/rehearse.sh [--bundle TARBALL] [--out DIR]
#   --bundle  the bundle (default .gpu-bundle/shakedown-gpu.tar.gz: run
#             test/gpu/bundle.sh first)
#   --out     where the results go (default /tmp/sd-rehearse-out):
#             device.log, steps.jsonl, summary.md, shakedown.db
# Exit: device.sh's (0 every step passed); 2 when the rehearsal cannot be
# set up (not root, no debootstrap, no overlay, no archive), the reason on
# stderr; 77 with SD_REHEARSE_SKIP_OK=1 in those cases (the test suite's
# skip).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
tgz=$top/.gpu-bundle/shakedown-gpu.tar.gz
out=/tmp/sd-rehearse-out
while [ $# -gt 0 ]; do
	case $1 in
	--bundle) tgz=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "rehearse: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
cannot() {
	echo "rehearse: cannot rehearse here: $*" >&2
	[ -n "${SD_REHEARSE_SKIP_OK:-}" ] && exit 77
	exit 2
}
base=${SD_MINBASE:-/var/tmp/shakedown-minbase-bookworm}
mirror=${SD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cuda=$(readlink -f /usr/local/cuda 2>/dev/null || true)

if [ -z "${SD_REHEARSE_INSIDE:-}" ]; then
	[ -f "$tgz" ] || { echo "rehearse: no bundle at $tgz: run test/gpu/bundle.sh first" >&2; exit 2; }
	[ "$(id -u)" = 0 ] || cannot "needs root (debootstrap, mount, chroot)"
	command -v unshare >/dev/null 2>&1 || cannot "unshare not found (util-linux)"
	[ -n "$cuda" ] && [ -f "$cuda/lib64/libcudart.so.13" ] ||
		cannot "no CUDA 13 toolkit at /usr/local/cuda to bind into the root"
	[ -f "$cuda/lib64/libnccl.so.2" ] || cannot "no NCCL in $cuda/lib64 to lay out as the wheel"
	if [ ! -f "$base/.shakedown-minbase" ]; then
		command -v debootstrap >/dev/null 2>&1 ||
			cannot "debootstrap not found (apt-get install debootstrap)"
		echo "rehearse: making the bare root in $base (debootstrap --variant=minbase bookworm, once)"
		rm -rf "$base"
		mkdir -p "$base"
		if ! debootstrap --variant=minbase bookworm "$base" "$mirror" >"$base.log" 2>&1; then
			tail -n 5 "$base.log" >&2
			rm -rf "$base"
			cannot "debootstrap from $mirror failed (log $base.log)"
		fi
		date -u +%Y-%m-%dT%H:%M:%SZ >"$base/.shakedown-minbase"
	fi
	# the root must be bare of what the bundle carries, or it proves nothing
	for l in libsqlite3.so.0 libyaml-0.so.2 libjansson.so.4 libgloo.so.0 \
		libcurl.so.4 libopenblas.so.0 libssl.so.3 libhiredis.so.0.14; do
		for d in "$base/usr/lib/x86_64-linux-gnu" "$base/lib/x86_64-linux-gnu" "$base/usr/lib"; do
			[ -e "$d/$l" ] && cannot "$base is not bare: it has $d/$l (remove $base to remake it)"
		done
	done
	for b in python3 gcc cc nvcc; do
		[ -e "$base/usr/bin/$b" ] && cannot "$base is not bare: it has /usr/bin/$b (remove $base to remake it)"
	done
	w=$(mktemp -d "${TMPDIR:-/tmp}/sd-rehearse.XXXXXX")
	rm -rf "$out"
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	echo "rehearse: bare root $base (made $(cat "$base/.shakedown-minbase")), overlay in $w, CUDA $cuda, results in $out"
	rc=0
	SD_REHEARSE_INSIDE=$w SD_REHEARSE_TGZ=$tgz SD_REHEARSE_OUT=$out \
		unshare -m -n sh "$0" || rc=$?
	rm -rf "$w"
	exit "$rc"
fi

# -- inside a private mount and network namespace --------------------------
w=$SD_REHEARSE_INSIDE
mount --make-rprivate /
ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null ||
	cannot "cannot bring up loopback in the private network namespace"
mkdir -p "$w/up" "$w/work" "$w/root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$w/up,workdir=$w/work" "$w/root" ||
	cannot "cannot mount an overlay over $base"
r=$w/root
mount -t proc proc "$r/proc"
mount --bind /dev "$r/dev"
# the CUDA toolkit, read-only, where the GPU machine has it
mkdir -p "$r/usr/local/cuda"
mount --bind "$cuda" "$r/usr/local/cuda"
mount -o remount,bind,ro "$r/usr/local/cuda"
# NCCL as the wheel lays it out, where the GPU machine's venv has it
wheel=$r/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib
mkdir -p "$wheel"
cp -L "$cuda/lib64/libnccl.so.2" "$wheel/libnccl.so.2"
# the checkout as the device call sends it: device.sh and the bundle
mkdir -p "$r/work/test/gpu" "$r/work/.gpu-bundle" "$r/out"
cp "$top/test/gpu/device.sh" "$r/work/test/gpu/"
cp "$SD_REHEARSE_TGZ" "$r/work/.gpu-bundle/shakedown-gpu.tar.gz"
mount --bind "$SD_REHEARSE_OUT" "$r/out"
echo "rehearse: in the root: $(chroot "$r" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), $(chroot "$r" dpkg-query -W -f='.' | wc -c) packages, no python3, no sqlite3, no compiler"
rc=0
chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root OUT=/out SD_GPU_DRY=1 SD_GPU_DIR=/tmp/bundle \
	sh -c 'cd /work && sh test/gpu/device.sh' || rc=$?
exit "$rc"
