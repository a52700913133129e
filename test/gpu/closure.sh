#!/bin/sh
# closure.sh - prove a GPU bundle (test/gpu/bundle.sh) self-contained: every
# shared library that ldd names for every ELF file under ROOT resolves to a
# file inside ROOT, or is one of the system set a GPU machine brings itself:
#
#   glibc        ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0
#                libdl.so.2 librt.so.1 libresolv.so.2 libutil.so.1
#   C++ runtime  libstdc++.so.6 libgcc_s.so.1 (PyTorch needs them too)
#   CUDA         libcuda.so.1 (the driver) libcudart.so.13
#                libcublas.so.13 libcublasLt.so.13 libnvidia-ml.so.1
#   NCCL         libnccl.so.2
#
# and no library or symbol version is "not found" (a glibc or libstdc++
# older than the build's shows as "version `GLIBC_2.34' not found").
# Runs here (bundle.sh, the test suite, the rehearsal on a bare root) and
# there (the device's preflight, with LD_LIBRARY_PATH at the CUDA and NCCL
# it found).  Needs only sh, ldd, od, find and sed.
#
# Usage: closure.sh ROOT     one line per problem, then a summary line;
#                            exit 0 when every file resolves, 1 otherwise,
#                            2 on bad usage
set -u
root=${1:-}
[ -n "$root" ] && [ -d "$root" ] || {
	echo "closure: usage: closure.sh ROOT (a bundle's folder)" >&2; exit 2; }
command -v ldd >/dev/null 2>&1 || {
	echo "closure: ldd not found (glibc's libc-bin): cannot check" >&2; exit 2; }
root=$(cd "$root" && pwd -P)

system='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libcuda\.so\.1|libcudart\.so\.13|libcublas\.so\.13|libcublasLt\.so\.13|libnvidia-ml\.so\.1|libnccl\.so\.2)$'

is_elf() { [ "$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' ')" = 7f454c46 ]; }

files=0 bad=0 carried=0
list=$(mktemp "${TMPDIR:-/tmp}/closure.XXXXXX") || exit 2
trap 'rm -f "$list"' EXIT INT TERM
find "$root" -type f | sort >"$list"
while read -r f; do
	is_elf "$f" || continue
	files=$((files + 1))
	case $f in "$root"/lib/deps/*) carried=$((carried + 1)) ;; esac
	rel=${f#"$root"/}
	out=$(ldd "$f" 2>&1) || {
		# a static executable, or one ldd cannot load at all
		case $out in
		*"not a dynamic executable"* | *"statically linked"*) continue ;;
		esac
		echo "closure: $rel: ldd failed: $(echo "$out" | head -n 1)"
		bad=$((bad + 1))
		continue
	}
	# "name => /path (0x...)", "name => not found", "/lib64/ld-... (0x...)",
	# "linux-vdso.so.1 (0x...)", "FILE: version `X' not found (required by Y)"
	echo "$out" | while IFS= read -r line; do
		case $line in
		*"not found"*)
			echo "closure: $rel: $(echo "$line" | sed 's/^[[:space:]]*//')" ;;
		*"=>"*)
			name=$(echo "$line" | sed 's/^[[:space:]]*\([^ ]*\) =>.*/\1/')
			path=$(echo "$line" | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p')
			case $path in "$root"/*) continue ;; esac
			echo "$name" | grep -Eq "$system" && continue
			echo "closure: $rel: $name comes from ${path:-?}, outside the bundle and not in the system set: carry it" ;;
		esac
	done >"$list.bad"
	if [ -s "$list.bad" ]; then
		cat "$list.bad"
		bad=$((bad + 1))
	fi
	rm -f "$list.bad"
done <"$list"
if [ "$files" = 0 ]; then
	echo "closure: no ELF file under $root"
	exit 1
fi
if [ "$bad" = 0 ]; then
	echo "closure: $files ELF files under $root ($carried carried libraries): every library resolves inside the bundle or to the system set"
	exit 0
fi
echo "closure: $bad of $files ELF files under $root need a library that is missing or outside the bundle"
exit 1
