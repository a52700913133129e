#!/bin/sh
# provision.sh - run HERE (the development machine, with Debian's archive
# reachable) before a GPU session: gather into .gpu-deps/ (ignored by git,
# carried by the device tool's `run`) everything the bare GPU machine needs
# to build and check shakedown, which has no network at all:
#
#   .gpu-deps/debs/          the Debian 12 .debs of the build dependencies
#                            the GPU image lacks (SQLite, libyaml, Gloo and
#                            its runtime libraries, pkgconf, make); unpacked
#                            there with dpkg -x into a private prefix
#   .gpu-deps/autogen.tar.gz the files autoreconf generates (configure,
#                            Makefile.in, aclocal.m4, config.h.in,
#                            build-aux/, libtool's m4), so the GPU machine
#                            needs no autoconf, automake, libtool or perl
#   .gpu-deps/autogen.sum    checksums of the inputs they were made from
#                            (device.sh warns when the tree moved on)
#   .gpu-deps/nccl-tests/    nccl-tests' source (from ../shared/anchors),
#                            built there by bench/nccl_bench.sh
#
# Usage: test/gpu/provision.sh   (from anywhere inside the checkout)
# Env:   SD_NCCL_TESTS_SRC  nccl-tests' source (default
#                           ../shared/anchors/nccl-tests beside the checkout)
#        SD_GPU_DEBS        the package list, to override the default
# Then:  bench/README-gpu.md says which `run` call uses it.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
say() { echo "provision: $*"; }
die() { echo "provision: error: $*" >&2; exit 1; }

command -v apt-get >/dev/null 2>&1 || die "apt-get not found: run this on the Debian development machine"
command -v autoreconf >/dev/null 2>&1 ||
	die "autoreconf not found: apt-get install autoconf automake libtool pkgconf"
command -v git >/dev/null 2>&1 || die "git not found"

dest=.gpu-deps
# ignored by git (the worktree's own exclude file), so it travels only when
# `run` names it in carry
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu-deps/' "$exclude" 2>/dev/null || echo '/.gpu-deps/' >>"$exclude"
git check-ignore -q "$dest/x" || die "$dest is not ignored by git (check $exclude)"

# -- the .debs ---------------------------------------------------------
# configure needs SQLite and libyaml (pkg-config), Gloo is optional but
# checked; curl, PMI2, Slurm and BLAS are configured off there.  Runtime
# libraries of libgloo0 as ldd shows them: hiredis, ibverbs, libnl.
debs=${SD_GPU_DEBS:-"libsqlite3-dev libsqlite3-0 libyaml-dev libyaml-0-2
  libgloo-dev libgloo0 libhiredis0.14 libibverbs1 libnl-3-200
  libnl-route-3-200 pkgconf pkgconf-bin libpkgconf3 make"}
# what device.sh leaves behind need not travel
rm -rf "$dest/debs" "$dest/prefix" "$dest/nccl" "$dest/.nccl-dir" "$dest/make.out"
mkdir -p "$dest/debs"
say "downloading:" $debs
# as root, apt's _apt user cannot write into the checkout: download as root
sandbox=""
[ "$(id -u)" = 0 ] && sandbox="-o APT::Sandbox::User=root"
if ! (cd "$dest/debs" && apt-get download -q $sandbox $debs >/dev/null); then
	die "apt-get download failed: run apt-get update first (as root), then again"
fi
for p in $debs; do
	ls "$dest/debs/${p}_"*.deb >/dev/null 2>&1 || die "no .deb for $p in $dest/debs"
done

# -- the generated autotools files -------------------------------------
# autoreconf in a copy of what git would send (tracked files and untracked
# ones it does not ignore), then keep only the files it added.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sd-provision.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --no-recursion | tar -xf - -C "$tmp"
(cd "$tmp" && find . -type f | sort) >"$tmp.before"
say "autoreconf -fi in a copy of the tree"
(cd "$tmp" && autoreconf -fi) >"$tmp.autoreconf.log" 2>&1 || {
	cat "$tmp.autoreconf.log" >&2
	rm -f "$tmp.before" "$tmp.autoreconf.log"
	die "autoreconf failed"
}
(cd "$tmp" && find . -type f ! -path './autom4te.cache/*' | sort) >"$tmp.after"
comm -13 "$tmp.before" "$tmp.after" >"$tmp.new"
grep -qx './configure' "$tmp.new" || die "autoreconf made no configure"
(cd "$tmp" && tar -czf - -T "$tmp.new") >"$dest/autogen.tar.gz"
say "generated files: $(wc -l <"$tmp.new") ($(tr '\n' ' ' <"$tmp.new" | cut -c1-200)...)"
rm -f "$tmp.before" "$tmp.after" "$tmp.new" "$tmp.autoreconf.log"
sh test/gpu/device.sh --autogen-sum >"$dest/autogen.sum"

# -- nccl-tests --------------------------------------------------------
src=${SD_NCCL_TESTS_SRC:-$top/../shared/anchors/nccl-tests}
[ -f "$src/src/common.cu" ] ||
	die "nccl-tests source not found at $src (set SD_NCCL_TESTS_SRC)"
rm -rf "$dest/nccl-tests"
mkdir -p "$dest/nccl-tests"
(cd "$src" && tar -cf - --exclude=./build --exclude=.git .) | tar -xf - -C "$dest/nccl-tests"
ver=$(sed -n 's/^#define NCCL_TESTS_VERSION "\(.*\)"/\1/p' "$dest/nccl-tests/src/common.h" 2>/dev/null)
say "nccl-tests ${ver:-?} from $src"

# -- size --------------------------------------------------------------
kib=$(du -sk "$dest" | cut -f1)
say "$(ls "$dest/debs" | wc -l) .debs, $(du -sh "$dest/debs" | cut -f1); autogen $(du -sh "$dest/autogen.tar.gz" | cut -f1); nccl-tests $(du -sh "$dest/nccl-tests" | cut -f1)"
say "total $dest: $(du -sh "$dest" | cut -f1) (carry limit 64 MiB with the whole checkout)"
[ "$kib" -lt 49152 ] || die "$dest is over 48 MiB: trim the package list"
say "ready: carry [\".gpu-deps\"], command: sh test/gpu/device.sh (see bench/README-gpu.md)"
