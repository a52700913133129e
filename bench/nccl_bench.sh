#!/bin/sh
# nccl_bench.sh - shakedown's NCCL backend against nccl-tests on the same
# GPU, the same NCCL, the same ops, sizes and placements.
#
# Builds nccl-tests (without MPI) from a source tree against the NCCL that
# shakedown's plugin uses, then runs, in ROUNDS interleaved rounds (the
# tool that goes first alternates from round to round), for each op:
#
#   shakedown   run --local 1 --backend nccl --op OP -d float32 [-o sum]
#   nccl-tests  OP_perf -g 1 -d float [-o sum]
#
# both over the same sizes (-b 8 -e MAX -f 2) with the same iterations
# (-n 20 -w 5).  Both print nccl-tests' table (shakedown's text sink
# copies its format: src/sink_text.c), one parser reads both.  Ops
# (shakedown / nccl-tests): all_reduce / all_reduce_perf, all_gather /
# all_gather_perf, reduce_scatter / reduce_scatter_perf, broadcast /
# broadcast_perf, all_to_all / alltoall_perf, sendrecv / sendrecv_perf.
#
# The report (markdown, on stdout and in --out FILE): per op, size and
# placement, each tool's median time and algbw with min-max over the
# rounds, and the ratios shakedown / nccl-tests; on one GPU busbw is
# 0 for every op but broadcast and sendrecv (bus factor (n-1)/n), so the
# bandwidth ratio is algbw's.  The goals of issue 13 are marked per cell:
#   time   shakedown / nccl-tests <= 1.10 at 8 B .. 1 MiB
#   algbw  shakedown / nccl-tests >= 0.98 at >= 64 MiB
# with nvidia-smi's clocks, temperature, power and utilisation and the
# load average before and after, as the GPU's load record.
#
# Usage:
#   bench/nccl_bench.sh [--nccl-tests DIR] [--nccl DIR] [--out FILE]
#                       [--rounds N] [--max SIZE] [--ops "OP ..."]
#                       [--budget SECONDS] [--keep DIR] [--build-dir DIR]
#                       [--build-only]
#     --build-dir DIR   build nccl-tests there (kept; already built: no
#                       build); --build-only: build it and stop (no GPU
#                       needed, NVCC_GENCODE or sm_90 then)
#   bench/nccl_bench.sh --parse-only FILE...   parse captured tables
#                       (either tool's), print the rows as TSV and the
#                       ratio table over them; no GPU needed
#   bench/nccl_bench.sh --self-test            parse bench/samples/ and
#                       check the result; no GPU needed
# Defaults: nccl-tests' source ../shared/anchors/nccl-tests beside the
# checkout, NCCL the CUDA toolkit's; 3 rounds, MAX 1G, the six ops above, a
# budget of 150 s (a round that would not fit is not started, and the
# report says how many ran).  Run from the build tree after make, or from
# a GPU bundle (test/gpu/check.sh: SHAKEDOWN=the bundle's binary,
# --build-dir its prebuilt nccl-tests, --nccl the folder of libnccl.so.2).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
me=nccl_bench
die() { echo "$me: error: $*" >&2; exit 2; }
say() { echo "$me: $*" >&2; }

# -- parsing: nccl-tests' table (src/util.cu) ---------------------------
# A row: "%12li  %12li  %8s  %6s  %6s" (size count type redop root), then
# per placement, out-of-place first, "  %7s  %6s  %6s  %6g" (time algbw
# busbw #wrong; "N/A" for #wrong when not checked, and shakedown writes N/A
# in every column of a placement it did not measure).  Comment lines start
# with '#'; the op comes from "# Collective test starting: OP_perf"
# (nccl-tests) or "# Test N: OP, ..." (shakedown), else from the caller.
# Output TSV: tool round op type redop size place time_us algbw busbw wrong
parse_table() { # TOOL ROUND OP FILE (TOOL/OP "" = from the file)
	awk -v tool="$1" -v round="$2" -v op="$3" '
	function opname(s) { sub(/_perf.*$/, "", s); if (s == "alltoall") s = "all_to_all"; return s }
	function num(s) { return s ~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
	/^# nccl-tests version/ { if (tool == "") tool = "nccl-tests" }
	/^# Collective test starting:/ { n = split($0, w, " "); op = opname(w[n]) }
	/^# Test [0-9]+:/ { if (tool == "") tool = "shakedown"; o = $4; sub(/,$/, "", o); op = o }
	/^#/ { next }
	NF >= 13 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {
		for (p = 0; p < 2; p++) {
			c = 6 + 4 * p
			if (!num($c) || !num($(c + 1)) || !num($(c + 2))) continue
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", \
				(tool == "" ? "?" : tool), round, (op == "" ? "?" : op), \
				$3, $4, $1, (p ? "in" : "out"), $c, $(c + 1), $(c + 2), $(c + 3)
			rows++
		}
	}
	END { if (!rows) { print "nccl_bench: no table rows in " FILENAME > "/dev/stderr"; exit 1 } }
	' "$4"
}

# -- the report: medians (min-max) over the rounds and the ratios -------
# stdin: the TSV above; stdout: markdown
report() {
	awk -F '\t' '
	function med(k, n,   i, j, t, a) {
		n = cnt[k]; for (i = 1; i <= n; i++) a[i] = v[k, i]
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		lo[k] = a[1]; hi[k] = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function add(k, x) { cnt[k]++; v[k, cnt[k]] = x + 0 }
	function hsize(b) {
		if (b >= 1073741824 && b % 1073741824 == 0) return (b / 1073741824) "G"
		if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) "M"
		if (b >= 1024 && b % 1024 == 0) return (b / 1024) "K"
		return b
	}
	function mm(k, f,   m) { m = med(k); return sprintf(f " (" f "-" f ")", m, lo[k], hi[k]) }
	{
		key = $3 SUBSEP $6 SUBSEP $7
		if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
		add($1 SUBSEP key SUBSEP "t", $8); add($1 SUBSEP key SUBSEP "a", $9)
		add($1 SUBSEP key SUBSEP "b", $10)
		if ($11 != "N/A" && $11 + 0 > 0) wrong[$1 SUBSEP key] += $11
		rounds[$1 SUBSEP $2] = 1
	}
	END {
		for (r in rounds) { split(r, q, SUBSEP); nr[q[1]]++ }
		printf "Medians (min-max) over %d shakedown and %d nccl-tests rounds; time in us, algbw and busbw in GB/s; ratio = shakedown / nccl-tests.\n\n", nr["shakedown"], nr["nccl-tests"]
		print "| op | size | place | nccl-tests time | shakedown time | time ratio | nccl-tests algbw | shakedown algbw | algbw ratio | busbw nt / sd | goal |"
		print "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
		miss = 0; met = 0
		for (i = 1; i <= nk; i++) {
			k = keys[i]; split(k, f, SUBSEP)
			nt = "nccl-tests" SUBSEP k; sd = "shakedown" SUBSEP k
			hn = ((nt SUBSEP "t") in cnt); hs = ((sd SUBSEP "t") in cnt)
			if (!hn || !hs) {
				xn = "-"; xs = "-"
				if (hn) xn = mm(nt SUBSEP "t", "%.2f")
				if (hs) xs = mm(sd SUBSEP "t", "%.2f")
				printf "| %s | %s | %s | %s | %s | - | | | - | | only one tool |\n", f[1], hsize(f[2]), f[3], xn, xs
				continue
			}
			tn = med(nt SUBSEP "t"); ts = med(sd SUBSEP "t"); an = med(nt SUBSEP "a"); as = med(sd SUBSEP "a")
			tr = tn > 0 ? ts / tn : 0; ar = an > 0 ? as / an : 0
			goal = "-"
			if (f[2] <= 1048576) { goal = tr <= 1.10 ? "time ok" : "time MISS"; if (tr <= 1.10) met++; else miss++ }
			else if (f[2] >= 67108864 && f[3] == "in" && tn < 10 && ts < 10) {
				# one rank in place: NCCL moves nothing (a few us for
				# any size), so its "bandwidth" is size / enqueue time
				goal = "no data moved"; noop++
			}
			else if (f[2] >= 67108864) { goal = ar >= 0.98 ? "algbw ok" : "algbw MISS"; if (ar >= 0.98) met++; else miss++ }
			if (wrong[nt] || wrong[sd]) goal = goal ", WRONG DATA"
			ars = "-"; if (an > 0) ars = sprintf("%.3f", ar)
			printf "| %s | %s | %s | %s | %s | %.3f | %s | %s | %s | %.2f / %.2f | %s |\n", f[1], hsize(f[2]), f[3], \
				mm(nt SUBSEP "t", "%.2f"), mm(sd SUBSEP "t", "%.2f"), tr, mm(nt SUBSEP "a", "%.2f"), \
				mm(sd SUBSEP "a", "%.2f"), ars, med(nt SUBSEP "b"), med(sd SUBSEP "b"), goal
		}
		printf "\nGoals: %d cells met, %d missed (time <= 1.10x at <= 1 MiB, algbw >= 0.98x at >= 64 MiB)", met, miss
		if (noop) printf "; %d cells at >= 64 MiB moved no data (one rank, in place: under 10 us for any size) and are not judged on bandwidth", noop
		printf ".\n"
	}'
}

# -- the modes without a GPU --------------------------------------------
if [ "${1:-}" = --parse-only ]; then
	shift
	[ $# -ge 1 ] || die "--parse-only needs at least one FILE"
	tsv=$(mktemp "${TMPDIR:-/tmp}/nccl_bench.XXXXXX")
	trap 'rm -f "$tsv"' EXIT
	for f in "$@"; do
		[ -r "$f" ] || die "cannot read $f"
		parse_table "" 1 "" "$f" >>"$tsv" || exit 1
	done
	echo "## rows (tool round op type redop size place time_us algbw busbw wrong)"
	cat "$tsv"
	echo
	echo "## report"
	report <"$tsv"
	exit 0
fi
if [ "${1:-}" = --self-test ]; then
	s=$TOP/bench/samples
	out=$(sh "$0" --parse-only "$s/nccl-tests-all_reduce.txt" "$s/shakedown-all_reduce.txt") ||
		die "self-test: --parse-only failed"
	fails=0
	expect() { # DESCRIPTION EXTENDED-REGEX
		if printf '%s\n' "$out" | grep -Eq -- "$2"; then echo "ok - $1"
		else echo "not ok - $1 (no /$2/)"; fails=$((fails + 1)); fi
	}
	n_nt=$(printf '%s\n' "$out" | grep -c '^nccl-tests	')
	n_sd=$(printf '%s\n' "$out" | grep -c '^shakedown	')
	if [ "$n_nt" = 60 ]; then echo "ok - nccl-tests sample: 30 sizes x 2 placements"
	else echo "not ok - nccl-tests rows: $n_nt, want 60"; fails=$((fails + 1)); fi
	if [ "$n_sd" = 36 ]; then echo "ok - shakedown sample: 18 sizes x 2 placements"
	else echo "not ok - shakedown rows: $n_sd, want 36"; fails=$((fails + 1)); fi
	expect "first nccl-tests row, out of place" '^nccl-tests	1	all_reduce	float	sum	8	out	6\.71	0\.00	0\.00	0$'
	expect "first nccl-tests row, in place" '^nccl-tests	1	all_reduce	float	sum	8	in	4\.12	0\.00	0\.00	0$'
	expect "largest nccl-tests row (4 GiB, past 2^31)" '^nccl-tests	1	all_reduce	float	sum	4294967296	out	1412\.80	3040\.0	0\.00	0$'
	expect "shakedown's op from its '# Test N:' line" '^shakedown	1	all_reduce	float	sum	8	out	0\.06	0\.13	0\.00	0$'
	expect "shakedown's 5-digit algbw" '^shakedown	1	all_reduce	float	sum	1048576	in	0\.06	18893	0\.00	0$'
	expect "a ratio row at 8 B" '^\| all_reduce \| 8 \| out \| 6\.71 \(6\.71-6\.71\) \| 0\.06 \(0\.06-0\.06\) \| 0\.009 \|.*\| time ok \|$'
	expect "a ratio row at 1 MiB" '^\| all_reduce \| 1M \| in \|'
	expect "4 GiB is nccl-tests' alone" '^\| all_reduce \| 4G \| out \| 1412\.80 .*only one tool \|$'
	expect "the goal tally (the CPU sample misses at 512K and 1M out of place)" '^Goals: 33 cells met, 3 missed'
	[ "$fails" = 0 ] || { echo "$me: self-test: $fails failed"; exit 1; }
	echo "$me: self-test passed"
	exit 0
fi

# -- the benchmark (needs a GPU) ----------------------------------------
NT_SRC=$TOP/../shared/anchors/nccl-tests
NCCL=""
OUTFILE=""
ROUNDS=3
MAX=1G
OPS="all_reduce all_gather reduce_scatter broadcast all_to_all sendrecv"
BUDGET=150
KEEP=""
BUILD_DIR=""
BUILD_ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--nccl-tests) NT_SRC=$2; shift 2 ;;
	--nccl) NCCL=$2; shift 2 ;;
	--out) OUTFILE=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--max) MAX=$2; shift 2 ;;
	--ops) OPS=$2; shift 2 ;;
	--budget) BUDGET=$2; shift 2 ;;
	--keep) KEEP=$2; shift 2 ;;
	--build-dir) BUILD_DIR=$2; shift 2 ;;
	--build-only) BUILD_ONLY=1; shift ;;
	*) die "unknown argument '$1' (see the usage at the top of $0)" ;;
	esac
done
t_start=$(date +%s)
# SHAKEDOWN set: that binary finds its own plugin (an installed tree or a
# GPU bundle, test/gpu/bundle.sh); else this build tree's
SD=${SHAKEDOWN:-$TOP/src/shakedown}
if [ -z "$BUILD_ONLY" ]; then
	[ -x "$SD" ] || die "$SD is missing: run make first"
	[ -n "${SHAKEDOWN:-}" ] || [ -f "$TOP/plugins/nccl/.libs/backend_nccl.so" ] ||
		die "the NCCL plugin is not built (configure --enable-nccl=yes)"
	command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi not found: no GPU here"
	nvidia-smi -L >/dev/null 2>&1 || die "nvidia-smi sees no GPU"
fi
nvcc=$(command -v nvcc 2>/dev/null) || nvcc=/usr/local/cuda/bin/nvcc
CUDA=$(dirname "$(dirname "$nvcc")")
[ -n "$NCCL" ] || NCCL=$CUDA
# --nccl: NCCL's home (include/, lib/), or, with nccl-tests already
# built, the folder of libnccl.so.2 itself
for d in "$NCCL/lib" "$NCCL/lib64" "$NCCL"; do
	[ -e "$d/libnccl.so.2" ] && LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
export LD_LIBRARY_PATH
[ -n "${SHAKEDOWN:-}" ] || export SHAKEDOWN_PLUGIN_DIR=$TOP/plugins/nccl/.libs
if [ -n "$KEEP" ]; then W=$KEEP; mkdir -p "$W"
else W=$(mktemp -d "${TMPDIR:-/tmp}/nccl_bench.XXXXXX"); trap 'rm -rf "$W"' EXIT; fi
left() { echo $(( BUDGET - ($(date +%s) - t_start) )); }
# a timeout for the next command: what is left, at least 1 s (timeout 0
# would mean none)
tleft() { l=$(left); [ "$l" -ge 1 ] || l=1; echo "$l"; }

gpu_record() { # LABEL
	echo "- $1: loadavg $(cut -d' ' -f1-3 /proc/loadavg); GPU: $(nvidia-smi \
		--query-gpu=name,pstate,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,utilization.gpu,memory.used \
		--format=csv,noheader 2>&1 | head -n 1)"
}

# nccl-tests, for this GPU's compute capability alone (a short build;
# NVCC_GENCODE overrides, sm_90 where no GPU answers), into --build-dir
# (kept: a later run with the same folder skips the build)
bt=${BUILD_DIR:-$W/nccl-tests-build}
ops_bins() { for o in $OPS; do nt_bin "$o"; done; }
nt_bin() { case $1 in all_to_all) echo alltoall_perf ;; *) echo "${1}_perf" ;; esac; }
have_bins=1
for b in $(ops_bins); do [ -x "$bt/$b" ] || have_bins=""; done
nt_built="already built in $bt"
if [ -n "$have_bins" ]; then
	say "nccl-tests $nt_built"
else
	[ -f "$NT_SRC/src/common.cu" ] ||
		die "no nccl-tests source at $NT_SRC, and $bt has not all of: $(ops_bins | tr '\n' ' ')"
	[ -f "$NCCL/include/nccl.h" ] || die "no include/nccl.h in $NCCL (--nccl DIR) to build nccl-tests against"
	if [ -n "${NVCC_GENCODE:-}" ]; then gencode=$NVCC_GENCODE
	else
		cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')
		gencode="-gencode=arch=compute_${cc:-90},code=sm_${cc:-90}"
	fi
	say "building nccl-tests ($NT_SRC) into $bt against $NCCL, $gencode"
	b0=$(date +%s)
	mkdir -p "$bt"
	if ! timeout -k 5 "$(tleft)" make -s -C "$NT_SRC" -j"$(nproc)" BUILDDIR="$bt" \
		NCCL_HOME="$NCCL" CUDA_HOME="$CUDA" NVCC_GENCODE="$gencode" MPI=0 >"$bt/build.log" 2>&1; then
		tail -n 30 "$bt/build.log" >&2
		die "nccl-tests did not build (log above, $bt/build.log)"
	fi
	build_s=$(( $(date +%s) - b0 ))
	for b in $(ops_bins); do [ -x "$bt/$b" ] || die "nccl-tests built, but $bt/$b is missing"; done
	nt_built="built in $build_s s for $gencode"
	say "nccl-tests $nt_built"
fi
[ -z "$BUILD_ONLY" ] || exit 0

redop() { case $1 in all_reduce | reduce_scatter | reduce) echo "-o sum" ;; *) echo "" ;; esac; }
run_nt() { # ROUND OP
	# shellcheck disable=SC2046
	timeout -k 5 "$(tleft)" "$bt/$(nt_bin "$2")" -g 1 -b 8 -e "$MAX" -f 2 -n 20 -w 5 \
		-d float $(redop "$2") -c 1 >"$W/r$1-nccl-tests-$2.txt" 2>&1
}
run_sd() { # ROUND OP
	# shellcheck disable=SC2046
	timeout -k 5 "$(tleft)" "$SD" run --local 1 --backend nccl --db none --no-progress \
		--format table --op "$2" -d float32 $(redop "$2") -b 8 -e "$MAX" -f 2 -n 20 -w 5 --timeout 60 \
		>"$W/r$1-shakedown-$2.txt" 2>&1
}

rec=$W/record.md
: >"$rec"
gpu_record "before" >>"$rec"
tsv=$W/results.tsv
: >"$tsv"
failed=0
done_rounds=0
r=1
round_s=0
while [ "$r" -le "$ROUNDS" ]; do
	l=$(left)
	if [ "$r" -gt 1 ] && [ "$l" -lt $(( round_s + 5 )) ]; then
		say "round $r not started: $l s left, a round took $round_s s"
		break
	fi
	r0=$(date +%s)
	for op in $OPS; do
		# the tool that goes first alternates by round
		if [ $((r % 2)) = 1 ]; then order="nccl-tests shakedown"; else order="shakedown nccl-tests"; fi
		for tool in $order; do
			if [ "$(left)" -le 0 ]; then
				say "round $r: the budget ran out before $tool $op"
				failed=1
				continue
			fi
			rc=0
			case $tool in
			nccl-tests) run_nt "$r" "$op" || rc=$? ;;
			shakedown) run_sd "$r" "$op" || rc=$? ;;
			esac
			f=$W/r$r-$tool-$op.txt
			if [ "$rc" != 0 ]; then
				say "round $r: $tool $op exit $rc; its last lines:"
				tail -n 8 "$f" >&2
				failed=1
			fi
			parse_table "$tool" "$r" "$op" "$f" >>"$tsv" || failed=1
		done
	done
	round_s=$(( $(date +%s) - r0 ))
	say "round $r: $round_s s"
	done_rounds=$r
	r=$((r + 1))
done
gpu_record "after" >>"$rec"

{
	echo "# shakedown vs nccl-tests on one GPU ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(hostname))"
	echo
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | head -n 1); CUDA $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')"
	# the versions as the runs report them: nccl-tests' header line
	# "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809"
	nth=$(cat "$W"/r1-nccl-tests-*.txt 2>/dev/null | grep -m 1 '^# nccl-tests version' || true)
	ntv=$(echo "$nth" | sed -n 's/^# nccl-tests version \([^ ]*\).*/\1/p')
	ncv=$(echo "$nth" | sed -n 's/.*nccl-library=\([0-9]*\).*/\1/p')
	[ -n "$ncv" ] && ncv="library $((ncv / 10000)).$((ncv % 10000 / 100)).$((ncv % 100)), as nccl-tests reports it"
	echo "- NCCL: $NCCL (${ncv:-version unknown}); nccl-tests ${ntv:-?} ($nt_built)"
	echo "- shakedown: $("$SD" --version 2>&1 | head -n 1), ${SD_COMMIT:-$(git -C "$TOP" log -1 --format=%h 2>/dev/null || echo '?')}"
	echo "- workload: -g 1, float32 (sum), 8 B .. $MAX by 2x, -n 20 -w 5, $done_rounds of $ROUNDS rounds interleaved (first tool alternating), $(( $(date +%s) - t_start )) s in all"
	cat "$rec"
	echo
	report <"$tsv"
} >"$W/report.md"
cat "$W/report.md"
[ -n "$OUTFILE" ] && cp "$W/report.md" "$OUTFILE"
[ "$done_rounds" -ge 1 ] || failed=1
exit "$failed"
