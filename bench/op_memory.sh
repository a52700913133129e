#!/bin/sh
# op_memory.sh - each collective's peak memory per rank over its size: the
# factor the memory check (sd_coll_mem_factor, include/shakedown/coll.h)
# holds a test's largest size against.
#
# Workload: `shakedown run --local N --op OP -b S -e S -n 1 -w 0` for every
# op of include/shakedown/coll.h at the sizes SIZES and at 1K (the
# baseline: the program, the backend, the control plane), on N = 2 and 4
# ranks; ops interleaved (the order rotates by round), REPEATS rounds.
# Peak: GNU time's maximum resident set size of the launcher, which is the
# largest of it and its waited-for children (wait4's rusage), so the
# largest rank's peak: a rank's VmHWM.  Where a memory cgroup can be made
# (v1, root), every run also runs in one and its memory.max_usage_in_bytes
# (every rank, the launcher and page cache together) is recorded as a
# control: it should be about N x the per-rank figure for a symmetric op.
# factor = (peak(S) - peak(1K)) / S.  The load average is recorded each
# round.  Output: one table of median (min-max) factor per op and rank
# count over sizes and rounds, then the raw rows.
#
# usage: bench/op_memory.sh [REPEATS]     (default 3)
# environment: SIZES ("32M 128M"), RANKS ("2 4"), OPS (every op),
# SHAKEDOWN, KEEP=DIR (keep the raw rows).  Run from the build tree after
# `make`.  Not part of `make check`; about 6 minutes on a 2-core machine,
# and up to 4 x 128M x 4 = 2 GiB of memory at once.
set -eu
REPEATS=${1:-3}
SIZES=${SIZES:-"32M 128M"}
RANKS=${RANKS:-"2 4"}
OPS=${OPS:-"all_reduce all_gather reduce_scatter all_to_all broadcast reduce gather scatter sendrecv pt2pt"}
TOP=$(cd "$(dirname "$0")/.." && pwd)
SD=${SHAKEDOWN:-$TOP/src/shakedown}
export SHAKEDOWN_PLUGIN_DIR=${SHAKEDOWN_PLUGIN_DIR:-$TOP/plugins/gloo/.libs}
TIME=/usr/bin/time
if [ ! -x "$SD" ] || [ ! -x "$TIME" ]; then
	echo "op_memory: needs $SD (run make) and GNU time ($TIME)" >&2
	exit 2
fi
OUT=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/op_memory.XXXXXX")}
mkdir -p "$OUT"
ROWS=$OUT/rows.tsv
: >"$ROWS"
cg=""
if [ -w /sys/fs/cgroup/memory ] &&
   mkdir "/sys/fs/cgroup/memory/sdbench.$$" 2>/dev/null; then
	cg=/sys/fs/cgroup/memory/sdbench.$$
	trap 'rmdir "$cg" 2>/dev/null' EXIT
fi

bytes() {
	case $1 in
	*K) echo $((${1%K} << 10)) ;;
	*M) echo $((${1%M} << 20)) ;;
	*G) echo $((${1%G} << 30)) ;;
	*) echo "$1" ;;
	esac
}

# one run: prints "peak_kb cgroup_peak_bytes"
one() { # n op size
	[ -n "$cg" ] && echo 0 >"$cg/memory.max_usage_in_bytes" 2>/dev/null
	if [ -n "$cg" ]; then
		set -- sh -c "echo \$\$ >'$cg/cgroup.procs' && exec $TIME -f '%M' -o '$OUT/t' '$SD' run --local $1 --op $2 -b $3 -e $3 -n 1 -w 0 --db none --no-progress"
	else
		set -- "$TIME" -f '%M' -o "$OUT/t" "$SD" run --local "$1" --op "$2" \
			-b "$3" -e "$3" -n 1 -w 0 --db none --no-progress
	fi
	if ! "$@" >"$OUT/out" 2>&1; then
		echo "op_memory: failed: $*" >&2
		tail -3 "$OUT/out" >&2
		echo "- -"
		return
	fi
	cgp=-
	[ -n "$cg" ] && cgp=$(cat "$cg/memory.max_usage_in_bytes")
	echo "$(tail -1 "$OUT/t") $cgp"
}

echo "# op_memory: $(date -u +%FT%TZ) $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; sizes $SIZES; ranks $RANKS; $REPEATS rounds; cgroup control: ${cg:-none}"
round=1
while [ "$round" -le "$REPEATS" ]; do
	echo "# round $round: loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
	# rotate the op order by round
	set -- $OPS
	k=1
	while [ "$k" -lt "$round" ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k + 1))
	done
	order="$*"
	for n in $RANKS; do
		for op in $order; do
			set -- $(one "$n" "$op" 1K)
			base=$1 basecg=$2
			for s in $SIZES; do
				set -- $(one "$n" "$op" "$s")
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$n" \
					"$op" "$(bytes "$s")" "$base" "$1" "$basecg" "$2" >>"$ROWS"
			done
		done
	done
	round=$((round + 1))
done
echo "# loadavg at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# factor = (max RSS at S - max RSS at 1K) / S, per rank (largest rank);"
echo "# cg/N = the cgroup's peak over the ranks, (peak(S) - peak(1K)) / S / N"
printf '%-15s %5s %28s %28s\n' op ranks "factor median (min-max)" "cg/N median (min-max)"
sort -t"$(printf '\t')" -k3,3 -k2,2n "$ROWS" | awk -F'\t' '
function stats(v, k,   i, j, t, m) {
	for (i = 1; i <= k; i++)
		for (j = i + 1; j <= k; j++)
			if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	m = k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
	return k ? sprintf("%.2f (%.2f-%.2f)", m, v[1], v[k]) : "-"
}
function flush() {
	if (key != "")
		printf "%-15s %5s %28s %28s\n", op, n, stats(f, nf), stats(c, nc)
	delete f; delete c; nf = nc = 0
}
{
	k2 = $3 " " $2
	if (k2 != key) { flush(); key = k2; op = $3; n = $2 }
	if ($6 != "-" && $5 != "-") f[++nf] = ($6 - $5) * 1024 / $4
	if ($8 != "-" && $7 != "-") c[++nc] = ($8 - $7) / $4 / $2
}
END { flush() }'
echo "# raw rows: round ranks op size_bytes base_kb peak_kb base_cg_bytes peak_cg_bytes"
cat "$ROWS"
