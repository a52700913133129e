#!/bin/sh
# bundle.sh - build here, run there: pack shakedown, its plugins (the NCCL
# plugin included), plans and references, nccl-tests' binaries and the GPU
# kit (run.sh, check.sh, the peers' scripts) into one self-contained folder
# and tarball, with every shared library they need that a GPU machine does
# not bring itself (test/gpu/closure.sh names that system set: glibc, the
# C++ runtime, the CUDA driver and runtime, cuBLAS, NCCL).  The GPU machine
# only unpacks and runs it (test/gpu/device.sh); it compiles nothing.
#
#   build     make in the build tree (configured with the NCCL plugin)
#   install   make install DESTDIR=... of that tree: the installed layout,
#             which shakedown finds relative to its executable wherever it
#             is unpacked (lib/plugin.c, sd_relocated_dir)
#   kit       the kit's scripts, its two probes (gpu_libs: which CUDA,
#             cuBLAS and NCCL load; nccl_links: the GPU links) and sqlite3
#   nccl      nccl-tests from its source (../shared/anchors/nccl-tests),
#             built once into .gpu-build/nccl-tests and kept
#   closure   the BLAS that shakedown opens with dlopen (OpenBLAS), and
#             every library ldd names outside the system set, is copied
#             into lib/deps (until nothing new is named), each ELF file's
#             RUNPATH is pointed at lib/deps ($ORIGIN-relative, patchelf),
#             debug sections stripped, then closure.sh must pass
#   pack      MANIFEST (commit, build machine, the newest GLIBC_ symbol
#             version any file needs, every file with its size and the
#             Debian package of each carried library) and the tarball
#
# Usage: test/gpu/bundle.sh [--build DIR] [--out DIR] [--work DIR]
#                           [--no-nccl-tests] [--nccl-tests-src DIR]
#   --build DIR        a build tree configured with the NCCL plugin
#                      (default: this checkout, configured in place)
#   --out DIR          where shakedown-gpu.tar.gz goes, alone (default
#                      .gpu-bundle, which git ignores and the device call
#                      carries: under 48 MiB of its 64)
#   --work DIR         where the unpacked folder shakedown-gpu/ and the
#                      logs are made (default .gpu-build/bundle)
#   --no-nccl-tests    leave nccl-tests out (the test suite's closure test)
# Exit: 0 with the bundle made and its closure proven; 1 otherwise (the
# reason on stderr); 2 on bad usage.  Needs make, patchelf, ldd, objdump.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
me=bundle
die() { echo "$me: error: $*" >&2; exit 1; }
say() { echo "$me: $*"; }

build=$top out=$top/.gpu-bundle work=$top/.gpu-build/bundle nt=yes
nt_src=${SD_NCCL_TESTS_SRC:-$top/../shared/anchors/nccl-tests}
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--no-nccl-tests) nt=""; shift ;;
	--nccl-tests-src) nt_src=$2; shift 2 ;;
	*) echo "$me: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
	esac
done
for t in make patchelf ldd objdump strip tar gzip; do
	command -v "$t" >/dev/null 2>&1 ||
		die "$t not found (apt-get install make patchelf binutils libc-bin tar gzip)"
done
[ -f "$build/Makefile" ] || die "$build is not a configured build tree: run ./configure (quickstart.sh does) first"
build=$(cd "$build" && pwd)
mkdir -p "$out" "$work"
out=$(cd "$out" && pwd)
work=$(cd "$work" && pwd)
t0=$(date +%s)

# -- build ---------------------------------------------------------------
# make check's own make must not hand this one its job server
unset MAKEFLAGS MFLAGS MAKELEVEL GNUMAKEFLAGS
say "make in $build"
make -C "$build" -j"$(nproc)" --no-print-directory >"$work/make.log" 2>&1 ||
	{ tail -n 30 "$work/make.log" >&2; die "make failed in $build (log $work/make.log)"; }
make -C "$build" --no-print-directory test/gpu/gpu_libs plugins/nccl/nccl_links \
	>>"$work/make.log" 2>&1 ||
	{ tail -n 30 "$work/make.log" >&2; die "the NCCL plugin is not configured in $build: configure --enable-nccl=yes (needs CUDA and NCCL)"; }
[ -f "$build/plugins/nccl/.libs/backend_nccl.so" ] ||
	die "$build has no NCCL plugin: configure --enable-nccl=yes"

# the installed layout, from the build's own variables
vars=$(printf 'sd-print-dirs:\n\t@echo "$(prefix)|$(bindir)|$(pkglibdir)|$(pkgdatadir)|$(NVCC_GENCODE)"\n' |
	make -s -C "$build" --no-print-directory -f Makefile -f - sd-print-dirs)
prefix=$(echo "$vars" | cut -d'|' -f1)
bindir=$(echo "$vars" | cut -d'|' -f2)
pkglibdir=$(echo "$vars" | cut -d'|' -f3)
pkgdatadir=$(echo "$vars" | cut -d'|' -f4)
gencode=$(echo "$vars" | cut -d'|' -f5)
for d in "$bindir" "$pkglibdir" "$pkgdatadir"; do
	case $d in "$prefix"/*) ;; *) die "$d is not under the prefix $prefix: the bundle keeps the installed layout below the prefix" ;; esac
done

# -- install -------------------------------------------------------------
root=$work/shakedown-gpu
stage=$work/stage
rm -rf "$root" "$stage" "$out/shakedown-gpu.tar.gz"
make -C "$build" --no-print-directory install DESTDIR="$stage" >>"$work/make.log" 2>&1 ||
	{ tail -n 30 "$work/make.log" >&2; die "make install failed (log $work/make.log)"; }
mv "$stage$prefix" "$root"
rm -rf "$stage"
# what a GPU check does not read: headers, manuals, libtool archives
rm -rf "$root/include" "$root/share/man" "$root/share/doc"
find "$root" -name '*.la' -exec rm -f {} +
[ -x "$root${bindir#"$prefix"}/shakedown" ] || die "make install put no shakedown in $bindir"
[ -f "$root${pkglibdir#"$prefix"}/backend_nccl.so" ] || die "make install put no backend_nccl.so in $pkglibdir"
say "installed: prefix $prefix, bindir ${bindir#"$prefix"/}, plugins ${pkglibdir#"$prefix"/}, data ${pkgdatadir#"$prefix"/}"

# -- kit -----------------------------------------------------------------
kit=$root/kit
mkdir -p "$kit"
cp "$build/test/gpu/gpu_libs" "$build/plugins/nccl/nccl_links" "$kit/"
# sqlite3, to read the results database there as an operator would
command -v sqlite3 >/dev/null 2>&1 || die "sqlite3 not found (apt-get install sqlite3)"
cp "$(command -v sqlite3)" "$kit/sqlite3"
cp "$top/test/gpu/run.sh" "$top/test/gpu/check.sh" "$top/test/gpu/closure.sh" \
	"$top/test/system/lib.sh" "$top/bench/nccl_bench.sh" \
	"$top/bench/torch_gpt.py" "$top/bench/torch_matmul.py" "$kit/"
# the entry point, where the device call looks for it
printf '#!/bin/sh\nexec sh "$(dirname "$0")/kit/run.sh" "$@"\n' >"$root/run.sh"
chmod +x "$root/run.sh" "$kit"/*.sh

# -- nccl-tests ----------------------------------------------------------
nt_bins="all_reduce_perf all_gather_perf reduce_scatter_perf broadcast_perf alltoall_perf sendrecv_perf"
if [ -n "$nt" ]; then
	[ -f "$nt_src/src/common.cu" ] ||
		die "no nccl-tests source at $nt_src (--nccl-tests-src DIR, or --no-nccl-tests)"
	ntb=$top/.gpu-build/nccl-tests
	have=yes
	for b in $nt_bins; do [ -x "$ntb/$b" ] || have=""; done
	if [ -z "$have" ]; then
		nvcc=$(command -v nvcc 2>/dev/null) || nvcc=/usr/local/cuda/bin/nvcc
		cuda=$(dirname "$(dirname "$nvcc")")
		nccl=${SD_NCCL_HOME:-$cuda}
		nt_gencode=${SD_NT_GENCODE:-"-gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90"}
		say "building nccl-tests from $nt_src into $ntb ($nt_gencode; about 90 s on 2 cores)"
		mkdir -p "$ntb"
		make -s -C "$nt_src/src" -j"$(nproc)" BUILDDIR="$ntb" NCCL_HOME="$nccl" \
			CUDA_HOME="$cuda" NVCC_GENCODE="$nt_gencode" MPI=0 >"$ntb/build.log" 2>&1 ||
			{ tail -n 30 "$ntb/build.log" >&2; die "nccl-tests did not build (log $ntb/build.log)"; }
	fi
	mkdir -p "$root/nccl-tests"
	for b in $nt_bins; do cp "$ntb/$b" "$root/nccl-tests/"; done
	ntver=$(sed -n 's/^#define NCCL_TESTS_VERSION "\(.*\)"/\1/p' "$nt_src/src/common.h" 2>/dev/null)
	say "nccl-tests ${ntver:-?}: $(echo $nt_bins | wc -w) binaries"
fi

# -- closure -------------------------------------------------------------
is_elf() { [ "$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' ')" = 7f454c46 ]; }
elfs() { find "$root" -type f | sort | while read -r f; do is_elf "$f" && echo "$f"; done; }
# the libraries ldd names outside the system set and the bundle: copied
# into lib/deps, then again for what those need, until nothing is new
deps=$root/lib/deps
mkdir -p "$deps"
system=$(sed -n "s/^system='\(.*\)'\$/\1/p" "$top/test/gpu/closure.sh")
[ -n "$system" ] || die "no system set in test/gpu/closure.sh"
# what shakedown opens with dlopen, which ldd cannot see: the BLAS of the
# CPU gemm and training paths (lib/blas.c looks for libopenblas.so.0 first;
# dlopen honours the executable's RUNPATH, so lib/deps is searched)
for so in libopenblas.so.0; do
	p=$(ldconfig -p | sed -n "s/^[[:space:]]*$so (libc6,x86-64) => //p" | head -n 1)
	[ -n "$p" ] || die "$so not found (apt-get install libopenblas0): the CPU paths dlopen it"
	cp -L "$p" "$deps/$so"
	chmod u+w "$deps/$so"
	patchelf --set-rpath '$ORIGIN' "$deps/$so"
done
pass=0
while :; do
	pass=$((pass + 1))
	new=0
	for f in $(elfs); do
		ldd "$f" 2>/dev/null | sed -n 's/^[[:space:]]*\([^ ]*\) => \(\/[^ ]*\) (0x.*/\1 \2/p'
	done | sort -u >"$work/needed"
	while read -r name path; do
		echo "$name" | grep -Eq "$system" && continue
		case $path in "$root"/*) continue ;; esac
		[ -e "$deps/$name" ] && continue
		cp -L "$path" "$deps/$name"
		chmod u+w "$deps/$name"
		# RUNPATH now, so the next pass's ldd resolves its needs
		# inside the bundle
		patchelf --set-rpath '$ORIGIN' "$deps/$name"
		new=$((new + 1))
	done <"$work/needed"
	rm -f "$work/needed"
	[ "$new" = 0 ] && break
	[ "$pass" -lt 10 ] || die "the library closure did not settle in 10 passes"
done
# every ELF file's RUNPATH at lib/deps, relative to where it lies
for f in $(elfs); do
	case $f in "$deps"/*) continue ;; esac
	d=$(dirname "$f")
	rel=""
	x=${d#"$root"}
	while [ -n "$x" ]; do rel="$rel/.."; x=${x%/*}; done
	rp="\$ORIGIN$rel/lib/deps"
	case $f in
	"$root"/nccl-tests/*) rp="\$ORIGIN" ;; # only the system set
	esac
	patchelf --set-rpath "$rp" "$f"
done
for f in $(elfs); do strip --strip-debug "$f" 2>/dev/null || true; done
say "closure: $(ls "$deps" | wc -l) libraries carried in lib/deps: $(ls "$deps" | tr '\n' ' ')"
sh "$top/test/gpu/closure.sh" "$root" || die "the bundle is not self-contained (closure.sh above)"

# -- pack ----------------------------------------------------------------
glibc=$(for f in $(elfs); do objdump -T "$f" 2>/dev/null; done |
	grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -n 1)
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null | head -n 1)
{
	echo "shakedown GPU bundle"
	echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm), $(ldd --version | head -n 1)"
	echo "commit: $commit${dirty:+ with uncommitted changes}"
	echo "shakedown: $("$root${bindir#"$prefix"}/shakedown" --version 2>&1 | head -n 1)"
	echo "prefix: $prefix (relocatable: bin, plugins and data keep their places below it)"
	echo "nvcc targets: $gencode"
	echo "newest glibc symbol version needed: ${glibc:-none}"
	echo "system set (not carried): $(echo "$system" | sed 's/[\\^$()]//g; s/|/ /g')"
	echo "carried libraries (Debian package):"
	for l in $(ls "$deps"); do
		p=$(dpkg -S "*/$l" 2>/dev/null | head -n 1 | cut -d: -f1)
		echo "  $l ${p:-?}"
	done
	echo "files:"
	(cd "$root" && find . -type f | sort | while read -r f; do
		echo "  $(wc -c <"$f" | tr -d ' ') ${f#./}"; done)
} >"$root/MANIFEST"
tar -czf "$out/shakedown-gpu.tar.gz" -C "$work" shakedown-gpu
kib=$(du -k "$out/shakedown-gpu.tar.gz" | cut -f1)
say "newest glibc symbol version needed: ${glibc:-none} (this machine: $(ldd --version | head -n 1 | sed 's/.* //'))"
say "$out/shakedown-gpu.tar.gz, $(( kib / 1024 )).$(( kib % 1024 * 10 / 1024 )) MiB ($(du -sh "$root" | cut -f1) unpacked), $(( $(date +%s) - t0 )) s"
[ "$kib" -le 49152 ] || die "the bundle is over 48 MiB: carry less (the device call carries at most 64 MiB in all)"
