#!/bin/sh
# device.sh - run THERE, on the bare GPU machine, by the device tool's `run`
# from the repository root, with .gpu-deps carried (test/gpu/provision.sh
# made it here): build shakedown and check it on the GPU in one call.
#
#   unpack     dpkg -x every .deb of .gpu-deps/debs into .gpu-deps/prefix
#              (never over /) and point PATH, CPATH, LIBRARY_PATH,
#              LD_LIBRARY_PATH and PKG_CONFIG_PATH at it
#   nccl       NCCL: the CUDA toolkit's, else the nvidia-nccl-cu13 wheel's
#              (python3 -c 'import nvidia.nccl'), made a --with-nccl=DIR
#   autogen    configure and Makefile.in from .gpu-deps/autogen.tar.gz (no
#              autotools there), unless the tree has them
#   configure  --enable-nccl=yes --with-nccl=DIR, curl and PMI2 off
#   make       make -j(cores)
#   smoke      shakedown's version, a 2-rank Gloo run (the unpacked Gloo
#              loads), the NCCL plugin linked against the NCCL found
#   check      test/gpu/check.sh but its training checks (TAP; its log is
#              $OUT/gpu-check.log)
#   train      check.sh's training checks alone (SD_GPU_CHECK_PART=train:
#              shakedown train --backend nccl; $OUT/gpu-train.log), at most
#              90 s
#   bench      bench/nccl_bench.sh against .gpu-deps/nccl-tests (built in
#              the background from the nccl step on, into .gpu-deps/nt-build)
#
# Every step is timed and logged to $OUT/device.log; the whole run is held
# to SD_DEVICE_BUDGET seconds (default 480) by timeout, and a step to what
# is left, so the call returns even if something hangs.  The last line is
# the summary: each step and "ok", "FAILED" or "skipped (...)".  Exit 0 when
# no step failed (and, on a GPU, none was skipped).
#
# Usage: sh test/gpu/device.sh           on the GPU machine (OUT set by run)
#        SD_DEVICE_DRY=1 OUT=/tmp/o sh test/gpu/device.sh
#                                        here, without a GPU: every step but
#                                        check and bench ("skipped: no GPU")
#        sh test/gpu/device.sh --autogen-sum   the checksum of the inputs
#                                        of the generated files (provision)
# Env:   SD_DEVICE_BUDGET  seconds for everything (480)
#        SD_DEVICE_STEPS   the steps to run (default: all of the above)
#        SD_NCCL_DIR       NCCL's folder (include/nccl.h, lib/), to skip the
#                          search
#        SD_NCCL_WHEEL     the wheel's nvidia/nccl folder, to skip python3
#        NVCC_GENCODE      nvcc targets; default on a GPU: its own compute
#                          capability only (a shorter build), else configure's
#        SD_BENCH_ARGS     extra arguments for bench/nccl_bench.sh
#        SD_DEVICE_NT_BUILD=1  in a dry run, build nccl-tests too
#        SD_DEVICE_SLOW    a dry run's step limits are this many times longer
#                          (4: a 2-core machine shared with other builds)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
deps=$top/.gpu-deps

# the inputs of the generated files, whose checksum autogen.sum holds
autogen_inputs() {
	ls configure.ac Makefile.am m4/sd_*.m4 */*.am */*/*.am 2>/dev/null | sort
}
if [ "${1:-}" = --autogen-sum ]; then
	autogen_inputs | xargs sha256sum
	exit 0
fi

OUT=${OUT:-$top/gpu-out}
mkdir -p "$OUT"
log=$OUT/device.log
status=$OUT/.device-steps
budget=${SD_DEVICE_BUDGET:-480}

# -- the outer shell: the inner run under timeout, then the summary -------
if [ -z "${SD_DEVICE_INNER:-}" ]; then
	: >"$log"
	: >"$status"
	start=$(date +%s)
	# the steps' output goes to the log and to stdout (the tail that
	# `run` returns); the inner exit status through a file
	{
		rc=0
		SD_DEVICE_INNER=1 SD_DEVICE_START=$start OUT=$OUT \
			timeout -k 10 "$budget" sh "$0" "$@" || rc=$?
		echo "$rc" >"$OUT/.device-rc"
	} 2>&1 | tee -a "$log"
	rc=$(cat "$OUT/.device-rc" 2>/dev/null || echo 1)
	rm -f "$OUT/.device-rc"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "device.sh: the budget of $budget s ran out (timeout)" | tee -a "$log"
		echo "budget FAILED (ran out after $budget s)" >>"$status"
		rc=1
	fi
	line="device.sh summary ($(( $(date +%s) - start )) s):"
	while read -r name verdict; do
		line="$line $name $verdict;"
	done <"$status"
	rm -f "$status"
	echo "$line" | tee -a "$log"
	exit "$rc"
fi

# -- the inner shell: the steps ------------------------------------------
dry=${SD_DEVICE_DRY:-}
start=${SD_DEVICE_START:-$(date +%s)}
steps=${SD_DEVICE_STEPS:-"unpack nccl autogen configure make smoke check train bench"}
failed=0
note() { echo "device.sh: $*"; }
record() { echo "$1 $2" >>"$status"; }
wants() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
left() { echo $(( budget - ($(date +%s) - start) - 15 )); }

# run_step NAME LIMIT FUNCTION: time it, cap it at what the budget has left,
# record the verdict; a failed step makes the later ones that need it skip
run_step() {
	name=$1 limit=$2 fn=$3
	if ! wants "$name"; then return 0; fi
	if [ -n "${blocked:-}" ]; then
		note "---- $name: skipped (after $blocked failed)"
		record "$name" "skipped (after $blocked failed)"
		return 0
	fi
	# a dry run on a small machine gets SD_DEVICE_SLOW (4) times the limit
	if [ -n "$dry" ]; then limit=$((limit * ${SD_DEVICE_SLOW:-4})); fi
	l=$(left)
	[ "$l" -lt "$limit" ] && limit=$l
	if [ "$limit" -le 0 ]; then
		note "---- $name: skipped (no time left)"
		record "$name" "FAILED (no time left)"
		failed=1
		return 0
	fi
	note "---- $name (at most $limit s), $(date -u +%H:%M:%S)"
	t0=$(date +%s)
	step_rc=0
	SD_STEP_LIMIT=$limit
	"$fn" || step_rc=$?
	dt=$(( $(date +%s) - t0 ))
	if [ "$step_rc" = 0 ]; then
		note "---- $name: ok, $dt s"
		record "$name" "ok(${dt}s)"
	elif [ "$step_rc" = 77 ]; then
		note "---- $name: skipped: ${skip_why:-}"
		record "$name" "skipped(${skip_why:-})"
		# on a GPU machine a skipped GPU step proved nothing
		if [ -z "$dry" ]; then failed=1; fi
	else
		note "---- $name: FAILED (exit $step_rc), $dt s"
		record "$name" "FAILED(exit$step_rc,${dt}s)"
		failed=1
		case $name in
		unpack | nccl | autogen | configure | make) blocked=$name ;;
		esac
	fi
	return 0
}
# bounded: run a command under what the step may still take
bounded() {
	b_rc=0
	timeout -k 5 "$SD_STEP_LIMIT" "$@" || b_rc=$?
	if [ "$b_rc" = 124 ] || [ "$b_rc" = 137 ]; then
		note "timed out: the step's $SD_STEP_LIMIT s ran out in: $*"
	fi
	return "$b_rc"
}

note "shakedown device run, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), budget $budget s${dry:+, DRY (no GPU steps)}"
note "tree: $(git log -1 --format='%h %s' 2>/dev/null || echo 'not a git checkout')"
note "uname: $(uname -srm); cores: $(nproc); $(cat /proc/loadavg 2>/dev/null | cut -d' ' -f1-3 | sed 's/^/loadavg /')"
for t in gcc g++ make pkg-config nvcc python3 dpkg-deb autoreconf perl; do
	note "  $t: $(command -v $t 2>/dev/null || echo missing)"
done
if [ -z "$dry" ]; then
	nvidia-smi -L 2>&1 | sed 's/^/  /' || true
fi
[ -d "$deps/debs" ] ||
	note "warning: $deps/debs missing: was .gpu-deps carried? (run test/gpu/provision.sh here first)"

arch=$(uname -m)-linux-gnu
pfx=$deps/prefix

# NCCL is searched before the environment points at the prefix (python3
# must not load the prefix's libraries)
find_nccl_wheel() {
	if [ -n "${SD_NCCL_WHEEL:-}" ]; then echo "$SD_NCCL_WHEEL"; return; fi
	w=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])' 2>/dev/null) || w=""
	if [ -z "$w" ]; then
		for d in /usr/local/lib/python3*/dist-packages/nvidia/nccl \
			/usr/lib/python3*/dist-packages/nvidia/nccl \
			/opt/*/.venv/lib/python3*/site-packages/nvidia/nccl \
			/opt/*/lib/python3*/site-packages/nvidia/nccl \
			/usr/local/lib/python3*/site-packages/nvidia/nccl; do
			[ -f "$d/include/nccl.h" ] && { w=$d; break; }
		done
	fi
	echo "$w"
}
cuda_dir() {
	n=$(command -v nvcc 2>/dev/null) || n=/usr/local/cuda/bin/nvcc
	dirname "$(dirname "$n")"
}

s_unpack() {
	ls "$deps"/debs/*.deb >/dev/null 2>&1 || { note "no .debs in $deps/debs"; return 1; }
	rm -rf "$pfx"
	mkdir -p "$pfx"
	for d in "$deps"/debs/*.deb; do
		if command -v dpkg-deb >/dev/null 2>&1; then
			dpkg -x "$d" "$pfx" || return 1
		else # no dpkg: ar and tar do the same
			(x=$(mktemp -d) && cd "$x" && ar x "$d" &&
				tar -xf data.tar.* -C "$pfx" && cd / && rm -rf "$x") || return 1
		fi
	done
	# the .pc files say prefix=/usr: make them say the prefix
	for pc in "$pfx"/usr/lib/"$arch"/pkgconfig/*.pc "$pfx"/usr/share/pkgconfig/*.pc; do
		[ -f "$pc" ] || continue
		sed -i "s|^prefix=/usr\$|prefix=$pfx/usr|" "$pc"
	done
	note "unpacked $(ls "$deps"/debs/*.deb | wc -l) .debs into $pfx ($(du -sh "$pfx" | cut -f1))"
	ls "$pfx/usr/include" | tr '\n' ' '; echo
}
s_nccl() {
	if [ -n "${SD_NCCL_DIR:-}" ]; then
		nccl=$SD_NCCL_DIR
	else
		cd_=$(cuda_dir)
		if [ -z "${SD_NCCL_WHEEL:-}" ] && [ -f "$cd_/include/nccl.h" ] &&
			ls "$cd_"/lib*/libnccl.so >/dev/null 2>&1; then
			nccl=$cd_
			note "NCCL from the CUDA toolkit: $nccl"
		else
			w=$(find_nccl_wheel)
			if [ -z "$w" ] || [ ! -f "$w/include/nccl.h" ]; then
				note "NCCL not found: no include/nccl.h in $cd_ and no nvidia-nccl wheel (python3 -c 'import nvidia.nccl'); set SD_NCCL_DIR"
				return 1
			fi
			# the wheel ships lib/libnccl.so.2 alone: -lnccl needs
			# libnccl.so, so a folder of links stands for it
			so=$(ls "$w"/lib/libnccl.so* 2>/dev/null | head -n 1)
			[ -n "$so" ] || { note "no lib/libnccl.so* in $w"; return 1; }
			nccl=$deps/nccl
			rm -rf "$nccl"
			mkdir -p "$nccl/lib"
			ln -s "$w/include" "$nccl/include"
			ln -s "$so" "$nccl/lib/libnccl.so"
			ln -s "$so" "$nccl/lib/libnccl.so.2"
			note "NCCL from the wheel $w (as $nccl)"
		fi
	fi
	echo "$nccl" >"$deps/.nccl-dir"
	sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/NCCL_\1 \2/p' "$nccl/include/nccl.h" | tr '\n' ' '; echo
}

# the environment of everything after unpack: the prefix first
env_prefix() {
	l="$pfx/usr/lib/$arch:$pfx/lib/$arch:$pfx/usr/lib"
	# the machine's own tools first; the unpacked make and pkgconf where
	# it has none
	PATH=$PATH:$pfx/usr/bin
	CPATH=$pfx/usr/include${CPATH:+:$CPATH}
	LIBRARY_PATH=$l${LIBRARY_PATH:+:$LIBRARY_PATH}
	LD_LIBRARY_PATH=$l${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	PKG_CONFIG_PATH=$pfx/usr/lib/$arch/pkgconfig:$pfx/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
	export PATH CPATH LIBRARY_PATH LD_LIBRARY_PATH PKG_CONFIG_PATH
	if [ -f "$deps/.nccl-dir" ]; then
		nccl=$(cat "$deps/.nccl-dir")
		for d in "$nccl/lib64" "$nccl/lib"; do
			[ -d "$d" ] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
		done
	fi
	# pkg-config: the machine's, else the unpacked pkgconf
	if ! command -v pkg-config >/dev/null 2>&1 && [ -x "$pfx/usr/bin/pkgconf" ]; then
		PKG_CONFIG=$pfx/usr/bin/pkgconf
		export PKG_CONFIG
	fi
}

s_autogen() {
	if [ -f configure ] && [ -f Makefile.in ]; then
		note "configure and Makefile.in are in the tree: kept"
		return 0
	fi
	tgz=$deps/autogen.tar.gz
	[ -f "$tgz" ] || { note "no configure and no $tgz (run test/gpu/provision.sh here)"; return 1; }
	stale=""
	if [ -f "$deps/autogen.sum" ] && ! sha256sum -c --quiet "$deps/autogen.sum" >/dev/null 2>&1; then
		stale=yes
		note "warning: configure.ac, Makefile.am or m4/ changed since provision.sh made $tgz"
	fi
	if [ -n "$stale" ] && command -v autoreconf >/dev/null 2>&1; then
		note "autoreconf is here: autoreconf -fi instead"
		bounded autoreconf -fi && return 0
		note "autoreconf failed: the carried files instead"
	fi
	# -m: extracted now, newer than the tree; then in make's order, so
	# that make does not try to run aclocal, autoconf or automake
	tar -xzmf "$tgz" || return 1
	touch aclocal.m4
	sleep 1
	touch configure config.h.in
	find . -name Makefile.in ! -path './.gpu-deps/*' -exec touch {} +
	[ -z "$stale" ] || note "warning: using stale generated files; rerun test/gpu/provision.sh here"
	note "generated files unpacked from $tgz"
}

s_configure() {
	nccl=$(cat "$deps/.nccl-dir")
	set -- --enable-nccl=yes --with-nccl="$nccl" --without-curl --without-pmi2
	if [ -n "${NVCC_GENCODE:-}" ]; then
		set -- "$@" NVCC_GENCODE="$NVCC_GENCODE"
	elif [ -z "$dry" ]; then
		cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')
		[ -n "$cc" ] && set -- "$@" NVCC_GENCODE="-gencode arch=compute_$cc,code=sm_$cc"
	fi
	note "./configure $*"
	bounded ./configure "$@" >"$OUT/configure.out" 2>&1 || {
		tail -n 40 "$OUT/configure.out"
		cp config.log "$OUT/config.log" 2>/dev/null || true
		return 1
	}
	sed -n '/will be built with/,$p' "$OUT/configure.out"
	rm -f "$OUT/configure.out"
}

s_make() {
	bounded make -j"$(nproc)" >"$deps/make.out" 2>&1 || {
		tail -n 60 "$deps/make.out"
		return 1
	}
	tail -n 3 "$deps/make.out"
	test -x src/shakedown || { note "src/shakedown not built"; return 1; }
	test -f plugins/nccl/.libs/backend_nccl.so || { note "the NCCL plugin was not built"; return 1; }
	test -f plugins/gloo/.libs/backend_gloo.so || note "note: the Gloo plugin was not built"
}

s_smoke() {
	bounded src/shakedown --version || return 1
	note "libraries of the plugins (from the prefix where unpacked):"
	for so in plugins/nccl/.libs/backend_nccl.so plugins/gloo/.libs/backend_gloo.so src/.libs/shakedown src/shakedown; do
		[ -f "$so" ] || continue
		ldd "$so" 2>/dev/null | grep -E 'nccl|gloo|yaml|sqlite|ibverbs|hiredis|not found' | sed "s|^|  $so: |"
	done
	if ldd plugins/nccl/.libs/backend_nccl.so | grep -q 'not found'; then
		note "the NCCL plugin has a library not found"; return 1
	fi
	if [ -f plugins/gloo/.libs/backend_gloo.so ]; then
		SHAKEDOWN_PLUGIN_DIR=$top/plugins/gloo/.libs bounded src/shakedown run \
			--local 2 --backend gloo --db none --no-progress --op all_reduce \
			-b 8 -e 64K -n 3 -w 1 --timeout 30 || return 1
	fi
	if [ -n "$dry" ]; then
		# no GPU: the NCCL plugin must fail cleanly (exit 3, one line)
		rc=0
		SHAKEDOWN_PLUGIN_DIR=$top/plugins/nccl/.libs bounded src/shakedown run \
			--local 1 --backend nccl --db none --no-progress --op all_reduce \
			-b 8 -e 1K -n 2 -w 1 --timeout 20 || rc=$?
		note "no GPU: the NCCL backend exits $rc (want 3)"
		[ "$rc" = 3 ] || return 1
		# and so does the training workload's GPU path
		rc=0
		SHAKEDOWN_PLUGIN_DIR=$top/plugins/nccl/.libs bounded src/shakedown train \
			--local 1 --backend nccl --config test --steps 2 --db none \
			--no-progress --timeout 20 || rc=$?
		note "no GPU: train --backend nccl exits $rc (want 3)"
		[ "$rc" = 3 ] || return 1
	fi
}

s_check() {
	if [ -n "$dry" ]; then skip_why="no GPU"; return 77; fi
	OUT=$OUT SD_GPU_CHECK_PART=base bounded sh test/gpu/check.sh
}

s_train() {
	if [ -n "$dry" ]; then skip_why="no GPU"; return 77; fi
	OUT=$OUT SD_GPU_CHECK_PART=train bounded sh test/gpu/check.sh
}

s_bench() {
	if [ -n "$dry" ]; then
		if [ -n "$nt_pid" ]; then nt_wait || return 1; skip_why="no GPU (nccl-tests built)"
		else skip_why="no GPU"; fi
		return 77
	fi
	nt_wait || true
	nccl=$(cat "$deps/.nccl-dir")
	# shellcheck disable=SC2086
	OUT=$OUT bounded sh bench/nccl_bench.sh --nccl-tests "$deps/nccl-tests" \
		--nccl "$nccl" --build-dir "$deps/nt-build" --out "$OUT/nccl_bench.md" \
		--budget "$(( SD_STEP_LIMIT - 10 ))" \
		${SD_BENCH_ARGS:-}
}

run_step unpack 60 s_unpack
run_step nccl 30 s_nccl
env_prefix
note "env: PATH=$PATH"
note "env: CPATH=${CPATH:-} LIBRARY_PATH=${LIBRARY_PATH:-} LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-} PKG_CONFIG=${PKG_CONFIG:-}"
# nccl-tests builds in the background while shakedown configures and
# builds (16 cores there); bench waits for it.  Not in a dry run unless
# SD_DEVICE_NT_BUILD=1 (it needs no GPU, but minutes of 2 cores).
nt_pid=""
if wants bench && [ -f "$deps/.nccl-dir" ] && [ -f "$deps/nccl-tests/src/common.cu" ] &&
	{ [ -z "$dry" ] || [ -n "${SD_DEVICE_NT_BUILD:-}" ]; }; then
	note "nccl-tests: building in the background into $deps/nt-build (log $deps/nt-build.log)"
	sh bench/nccl_bench.sh --build-only --build-dir "$deps/nt-build" \
		--nccl "$(cat "$deps/.nccl-dir")" --nccl-tests "$deps/nccl-tests" \
		--budget "$(left)" >"$deps/nt-build.log" 2>&1 &
	nt_pid=$!
fi
nt_wait() {
	[ -n "$nt_pid" ] || return 0
	nt_rc=0
	wait "$nt_pid" || nt_rc=$?
	nt_pid=""
	cat "$deps/nt-build.log"
	[ "$nt_rc" = 0 ] || note "nccl-tests: the background build failed (exit $nt_rc)"
	return "$nt_rc"
}

run_step autogen 60 s_autogen
run_step configure 120 s_configure
run_step make 240 s_make
run_step smoke 60 s_smoke
run_step check 240 s_check
run_step train 90 s_train
run_step bench 180 s_bench
# a background nccl-tests build that bench never waited for (a step before
# it failed): end it and its children, by PID
kill_tree() {
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$c"; done
	kill "$1" 2>/dev/null || true
}
if [ -n "$nt_pid" ] && kill -0 "$nt_pid" 2>/dev/null; then
	note "nccl-tests: the background build is not needed any more: stopped"
	kill_tree "$nt_pid"
fi
exit "$failed"
