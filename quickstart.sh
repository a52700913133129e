#!/bin/sh
# quickstart.sh - the README's two set-up commands, for a fresh Debian 12
# machine (as root or with sudo):
#
#   sh quickstart.sh           install what shakedown needs (apt-get), build
#                              it, and run the main job: the built-in plan on
#                              4 ranks of this host with the Gloo backend,
#                              results in ./shakedown.db, a summary at the end
#   sh quickstart.sh --check   install what the test suite needs as well,
#                              build, and run the whole suite (make check -j2)
#   SHAKEDOWN_NO_RUN=1 sh quickstart.sh    install and build only
#
# It prints a few lines of its own and then the run (or the suite).  The
# build's own output (autoreconf, configure, make) goes to quickstart.log,
# which is named, with its last lines, only when the build fails.
set -eu
cd "$(dirname "$0")"

mode=run
case "${1:-}" in
'') ;;
--check) mode=check ;;
*)
	echo "quickstart: unknown argument '$1'; use 'sh quickstart.sh' or 'sh quickstart.sh --check'" >&2
	exit 2
	;;
esac

# What the build and the main job need: a C and C++ tool chain and
# autotools; SQLite (sqlite3 to read the results), YAML (plans), Jansson
# (JSON), libcurl (report upload); Gloo (the CPU backend); PMI2 and
# libslurm (the bootstrap under srun); OpenBLAS (the CPU matrix multiplies
# of gemm and train).
build_packages="build-essential autoconf automake libtool pkgconf
  libsqlite3-dev sqlite3 libyaml-dev libjansson-dev libcurl4-openssl-dev
  libgloo-dev libpmi2-0-dev libslurm-dev libopenblas-dev ca-certificates"
# What only the test suite needs: the Slurm daemons and munge for its
# private cluster; iproute2 for network namespaces and traffic shaping;
# python3 and openssl for its HTTP(S) server; procps; Chromium to open the
# HTML report in a real browser; patchelf, binutils and debootstrap for the
# GPU kit's bundle and its rehearsal on a bare root; clang-format for the
# layout check (test/system/code_format.t).
test_packages="slurmctld slurmd slurm-client munge iproute2 python3 openssl
  procps chromium patchelf binutils debootstrap clang-format"

packages=$build_packages
[ "$mode" = check ] && packages="$packages $test_packages"

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "quickstart: installing Debian packages:$missing"
	as_root=""
	[ "$(id -u)" = 0 ] || as_root=sudo
	$as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq \
		--no-install-recommends $missing
fi

log=quickstart.log
build_failed() {
	echo "quickstart: the build failed ($1); the last lines of $log:" >&2
	tail -n 25 "$log" >&2
	exit 1
}
echo "quickstart: building"
: >"$log"
if [ ! -f Makefile ]; then
	autoreconf -fi >>"$log" 2>&1 || build_failed autoreconf
	./configure >>"$log" 2>&1 || build_failed configure
fi
make -j"$(nproc)" >>"$log" 2>&1 || build_failed make

# CUDA and NCCL present means the NCCL plugin must have been built: it may
# never drop out silently.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
	if [ -f /usr/local/cuda/include/nccl.h ] || [ -f /usr/include/nccl.h ]; then
		if [ ! -f plugins/nccl/.libs/backend_nccl.so ]; then
			echo "quickstart: CUDA and NCCL are installed but the NCCL plugin was not built; see the summary of ./configure in $log" >&2
			exit 1
		fi
	fi
fi

[ -n "${SHAKEDOWN_NO_RUN:-}" ] && exit 0
if [ "$mode" = check ]; then
	echo "quickstart: running the test suite: make check -j2"
	exec make check -j2
fi
echo "quickstart: running: src/shakedown run --local 4"
exec src/shakedown run --local 4
