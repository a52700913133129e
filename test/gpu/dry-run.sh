#!/bin/sh
# dry-run.sh - rehearse test/gpu/device.sh HERE, without a GPU, as the bare
# GPU machine would run it: on a copy of what `run` sends (the committed
# tree, plus .gpu-deps from test/gpu/provision.sh), in a private mount
# namespace where this machine's own copies of the carried packages
# (SQLite, libyaml, Gloo and its libraries, pkgconf, make), the autotools
# and the CUDA toolkit's NCCL are hidden (/dev/null bound over each file),
# and NCCL comes from a stand-in for the nvidia-nccl-cu13 wheel (a
# namespace package nvidia/nccl with include/ and lib/libnccl.so.2 alone,
# found by python3 as on the GPU machine).  So the build proves that the
# carried .debs, the generated configure and the wheel's layout are enough.
#
# Usage: test/gpu/dry-run.sh [OUT]   (root; OUT default /tmp/sd-dry-out)
# Exit:  device.sh's (0: every step but the GPU ones passed)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/sd-dry-out}
[ "$(id -u)" = 0 ] || { echo "dry-run: needs root (unshare -m, mount --bind)" >&2; exit 2; }
[ -d "$top/.gpu-deps/debs" ] || { echo "dry-run: run test/gpu/provision.sh first" >&2; exit 2; }
cuda=/usr/local/cuda
[ -f $cuda/include/nccl.h ] || { echo "dry-run: no $cuda/include/nccl.h to make the wheel stand-in from" >&2; exit 2; }

if [ -z "${SD_DRY_INSIDE:-}" ]; then
	w=$(mktemp -d "${TMPDIR:-/tmp}/sd-dry.XXXXXX")
	# what travels: the committed tree and the carried folder as provision
	# made it (not what device.sh left there)
	mkdir -p "$w/tree/.gpu-deps"
	git -C "$top" archive --format=tar HEAD | tar -xf - -C "$w/tree"
	(cd "$top/.gpu-deps" && tar -cf - debs autogen.tar.gz autogen.sum nccl-tests) |
		tar -xf - -C "$w/tree/.gpu-deps"
	# the wheel stand-in, made before NCCL is hidden
	mkdir -p "$w/site/nvidia/nccl/include" "$w/site/nvidia/nccl/lib"
	# every NCCL header, nccl_device/ too (2.28), as the wheel has them
	cp -R $cuda/include/nccl* "$w/site/nvidia/nccl/include/"
	cp -L "$(ls $cuda/lib64/libnccl.so.2* | head -n 1)" "$w/site/nvidia/nccl/lib/libnccl.so.2"
	rm -rf "$out"
	mkdir -p "$out"
	echo "dry-run: tree copy $w/tree, OUT $out"
	rc=0
	SD_DRY_INSIDE=$w unshare -m sh "$0" "$out" || rc=$?
	rm -rf "$w"
	exit "$rc"
fi

# -- inside the private mount namespace ----------------------------------
w=$SD_DRY_INSIDE
mount --make-rprivate /
n=0
hide() { mount --bind /dev/null "$1" && n=$((n + 1)); }
for p in libsqlite3-dev libsqlite3-0 libyaml-dev libyaml-0-2 libgloo-dev libgloo0 \
	libhiredis0.14 libibverbs1 libnl-3-200 libnl-route-3-200 pkgconf pkgconf-bin \
	libpkgconf3 make; do
	for f in $(dpkg -L "$p" 2>/dev/null); do
		case $f in /usr/share/doc/* | /usr/share/man/* | /usr/share/lintian/* | /etc/*) continue ;; esac
		[ -f "$f" ] && hide "$f"
	done
done
[ -d /usr/include/gloo ] && mount -t tmpfs none /usr/include/gloo
for b in autoconf autoheader autoreconf automake aclocal libtoolize autom4te m4; do
	f=$(command -v $b 2>/dev/null) || continue
	hide "$(readlink -f "$f")"
done
# the toolkit's NCCL must be absent, not empty (an empty libnccl.so on a
# -L path would shadow the wheel's): an overlay whose upper layer holds a
# whiteout (a 0/0 character device) for each NCCL file
for d in "$(readlink -f $cuda/include)" "$(readlink -f $cuda/lib64)" "$(readlink -f $cuda/lib)"; do
	[ -d "$d" ] || continue
	ls "$d" | grep -q '^\(nccl\|libnccl\)' || continue
	case " ${done_dirs:-} " in *" $d "*) continue ;; esac
	done_dirs="${done_dirs:-} $d"
	o=$(mktemp -d "$w/ovl.XXXXXX")
	mkdir -p "$o/up" "$o/work"
	for f in "$d"/nccl* "$d"/libnccl*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		mknod "$o/up/$(basename "$f")" c 0 0 && n=$((n + 1))
	done
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$o/up,workdir=$o/work" "$d"
done
for f in /usr/include/nccl*.h; do [ -f "$f" ] && hide "$f"; done
[ ! -e $cuda/include/nccl.h ] && [ ! -e $cuda/lib64/libnccl.so ] ||
	{ echo "dry-run: the toolkit's NCCL is still visible" >&2; exit 2; }
echo "dry-run: $n files hidden; make: $(command -v make || echo hidden); pkg-config: $(command -v pkg-config || echo hidden); autoreconf: $(command -v autoreconf || echo hidden)"
cd "$w/tree"
PYTHONPATH=$w/site${PYTHONPATH:+:$PYTHONPATH} SD_DEVICE_DRY=1 \
	SD_DEVICE_BUDGET=${SD_DEVICE_BUDGET:-1200} OUT=$1 sh test/gpu/device.sh
