#!/bin/sh
# quickstart.sh - the README's first command: install what is missing (Debian
# packages, with apt-get), build shakedown, and run the main job on the
# built-in plan: 4 ranks on this host with the Gloo backend, results in
# ./shakedown.db, a summary at the end.
#
#   sh quickstart.sh            install, build, run
#   SHAKEDOWN_NO_RUN=1 sh ...   install and build only
set -eu
cd "$(dirname "$0")"

# Build and test dependencies, all from Debian.  The Slurm daemons, munge,
# iproute2 and openssl are for the test suite's private cluster, network
# namespaces and HTTPS server; OpenBLAS for the CPU
# matrix multiplies (shakedown gemm, the training workload); Chromium for
# the test that opens the HTML report in a real browser; patchelf and
# debootstrap for the GPU kit's bundle and its rehearsal on a bare root
# (test/gpu/bundle.sh, test/gpu/rehearse.sh); clang-format for the test
# that the files it lays out stay so (test/system/code_format.t).
packages="build-essential autoconf automake libtool pkgconf
  libsqlite3-dev sqlite3 libyaml-dev libjansson-dev libcurl4-openssl-dev
  libgloo-dev libpmi2-0-dev libslurm-dev libopenblas-dev
  slurmctld slurmd slurm-client munge
  python3 openssl iproute2 procps ca-certificates chromium
  patchelf debootstrap clang-format"

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "quickstart: installing:$missing"
	as_root=""
	[ "$(id -u)" = 0 ] || as_root=sudo
	$as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq \
		--no-install-recommends $missing
fi

echo "quickstart: building"
autoreconf -fi >/dev/null
./configure --quiet
make -j"$(nproc)" --no-print-directory >/dev/null

# CUDA and NCCL present means the NCCL plugin must have been built: it may
# never drop out silently.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
	if [ -f /usr/local/cuda/include/nccl.h ] || [ -f /usr/include/nccl.h ]; then
		if [ ! -f plugins/nccl/.libs/backend_nccl.so ]; then
			echo "quickstart: CUDA and NCCL are installed but the NCCL plugin was not built; see the summary of ./configure" >&2
			exit 1
		fi
	fi
fi

[ -n "${SHAKEDOWN_NO_RUN:-}" ] && exit 0
echo "quickstart: running: src/shakedown run --local 4"
src/shakedown run --local 4 --no-progress
