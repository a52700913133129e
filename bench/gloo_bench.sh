#!/bin/sh
# gloo_bench.sh - shakedown's Gloo backend against raw Gloo, side by side.
#
# Runs bench/gloo_raw (every Gloo all_reduce algorithm) and
# `shakedown run --local N --op all_reduce` (algorithm auto) interleaved,
# REPEATS times, for each rank count, and prints per-size medians of both,
# the best raw algorithm, and the ratios the project aims for:
#   busbw  shakedown / best raw   >= 0.97 at sizes >= 8 MiB
#   time   shakedown / best raw   <= 1.05 at 1 KiB
# shakedown's in-place rows are compared (raw legacy algorithms run in
# place); out-of-place medians are printed beside them.
#
# usage: bench/gloo_bench.sh [REPEATS [RANKS...]]   (default: 5, 2 and 4)
# Run from the build tree after `make`.  Not part of `make check`.
set -eu
REPEATS=${1:-5}
[ $# -gt 0 ] && shift
RANKS=${*:-"2 4"}
TOP=$(cd "$(dirname "$0")/.." && pwd)
SD=${SHAKEDOWN:-$TOP/src/shakedown}
RAW=$TOP/bench/gloo_raw
export SHAKEDOWN_PLUGIN_DIR=${SHAKEDOWN_PLUGIN_DIR:-$TOP/plugins/gloo/.libs}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/gloo_bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

for rep in $(seq 1 "$REPEATS"); do
	for n in $RANKS; do
		echo "# repeat $rep, $n ranks" >&2
		"$RAW" -n "$n" -o all_reduce -i 200 -w 10 1K 8M 16M 64M >>"$OUT/raw"
		"$SD" run --local "$n" --db none --no-progress --format json \
			--op all_reduce -b 1K -e 1K -n 200 -w 10 >>"$OUT/sd" 2>>"$OUT/log"
		"$SD" run --local "$n" --db none --no-progress --format json \
			--op all_reduce -b 8M -e 64M -f 2 -n 8 -w 2 >>"$OUT/sd" 2>>"$OUT/log"
	done
done

python3 - "$OUT/raw" "$OUT/sd" <<'PY'
import json, statistics, sys
raw, sd = {}, {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=") for kv in line.split())
    k = (int(f["ranks"]), int(f["size_bytes"]), f["algo"])
    raw.setdefault(k, []).append((float(f["time_us"]), float(f["busbw_gbs"])))
for line in open(sys.argv[2]):
    d = json.loads(line)
    k = (d["nranks"], d["size_bytes"], d["in_place"])
    sd.setdefault(k, []).append((d["time_us"], d["busbw_gbs"]))
med = lambda xs, i: statistics.median(x[i] for x in xs)
print("# ranks size_bytes | raw best algo  time_us busbw_gbs | shakedown "
      "in-place time_us busbw_gbs (out-of-place busbw) | ratio")
for n in sorted({k[0] for k in raw}):
    for size in sorted({k[1] for k in raw if k[0] == n}):
        algos = {k[2]: v for k, v in raw.items() if k[:2] == (n, size)}
        if size <= 4096:
            best = min(algos, key=lambda a: med(algos[a], 0))
        else:
            best = max(algos, key=lambda a: med(algos[a], 1))
        bt, bb = med(algos[best], 0), med(algos[best], 1)
        ip, oop = sd.get((n, size, True)), sd.get((n, size, False))
        if not ip:
            continue
        st, sb = med(ip, 0), med(ip, 1)
        ob = med(oop, 1) if oop else float("nan")
        if size <= 4096:
            ratio = "time x%.2f (goal <= 1.05)" % (st / bt)
        else:
            ratio = "busbw x%.2f (goal >= 0.97)" % (sb / bb)
        print("%d %9d | %-16s %9.1f %7.3f | %9.1f %7.3f (%7.3f) | %s" %
              (n, size, best, bt, bb, st, sb, ob, ratio))
    for size in sorted({k[1] for k in raw if k[0] == n}):
        row = ["%s=%.1fus/%.3fGB/s" % (a, med(v, 0), med(v, 1))
               for (nn, s, a), v in sorted(raw.items())
               if nn == n and s == size]
        print("#   raw %d ranks %d B: %s" % (n, size, " ".join(row)))
PY
