#!/bin/sh
# cpu_bench.sh - shakedown's Gloo backend against every CPU peer, in one
# sitting: raw Gloo (bench/gloo_raw, every algorithm), PyTorch gloo timed
# with the DeepSpeed communication benchmark's method (bench/torch_gloo.py,
# when torch imports), and memcpy (bench/memcpy_bw) and iperf3 over
# 127.0.0.1 as the physical limits.
#
# Workload: every seed op (all_reduce, all_gather, reduce_scatter,
# all_to_all, broadcast, pt2pt) at 1K 64K 1M 16M 64M, on 2 and 4 ranks.
# The peers run interleaved by round: each round runs every peer at every
# rank count (the peer order rotates from round to round), with memcpy and
# the load average recorded around it; every peer does the same iterations
# at a size.  Shakedown runs one plan per rank count and round (a test per
# size), whose wall time is set against the time inside its operations.
# Then the medians (min-max) over the rounds give the ratio table, with a
# pass or fail per cell for the goals of issue 14:
#   busbw  shakedown / best raw Gloo algorithm   >= 1.0 at >= 1 MiB
#   time   shakedown / fastest raw Gloo algorithm <= 1.0 at 1K and 64K
#   busbw  shakedown / PyTorch gloo (DeepSpeed)  >= 1.0 at every size
#   time outside the timed operations            <= 10% of a plan's wall
#   start-up, a trivial --local 4 run            <= raw Gloo's + 20 ms
# with two controls (raw Gloo run twice a round, the second scored against
# the first by the same goals; the bench plan without its check pass) and
# the load record (load average per round, memcpy at the start and the end
# of the sitting) so that noise can be seen.
#
# usage: bench/cpu_bench.sh [REPEATS]          (default 5 rounds)
# environment: RANKS ("2 4"), POINTS (SIZE:ITERS:WARMUP list), ITER_PCT
# (percent of POINTS' iterations, for a quick look), STARTUP_RUNS (5 a
# round), KEEP=DIR (keep the raw results there), TORCH_PYTHON
# (/usr/bin/python3, Debian's python3-torch), IPERF3, SHAKEDOWN.
# Run from the build tree after `make`.  Not part of `make check`; it
# takes 7-8 minutes on a 2-core machine (README-cpu.md).
set -eu
REPEATS=${1:-5}
RANKS=${RANKS:-"2 4"}
POINTS=${POINTS:-"1K:100:10 64K:50:5 1M:20:3 16M:5:2 64M:3:1"}
ITER_PCT=${ITER_PCT:-100}
STARTUP_RUNS=${STARTUP_RUNS:-5}
TORCH_PYTHON=${TORCH_PYTHON:-/usr/bin/python3}
IPERF3=${IPERF3:-iperf3}
OPS="all_reduce all_gather reduce_scatter all_to_all broadcast pt2pt"
TOP=$(cd "$(dirname "$0")/.." && pwd)
SD=${SHAKEDOWN:-$TOP/src/shakedown}
RAW=$TOP/bench/gloo_raw
MEMCPY=$TOP/bench/memcpy_bw
TORCH=$TOP/bench/torch_gloo.py
export SHAKEDOWN_PLUGIN_DIR=${SHAKEDOWN_PLUGIN_DIR:-$TOP/plugins/gloo/.libs}

for f in "$SD" "$RAW" "$MEMCPY"; do
	if [ ! -x "$f" ]; then
		echo "cpu_bench: $f is missing; run make first" >&2
		exit 2
	fi
done
if [ -n "${KEEP:-}" ]; then
	OUT=$KEEP
	mkdir -p "$OUT"
else
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/cpu_bench.XXXXXX")
	trap 'rm -rf "$OUT"' EXIT
fi
: >"$OUT/notes"
note() { echo "$*" >>"$OUT/notes"; echo "# $*" >&2; }
now_us() { date +%s%6N; }
load() { echo "round=$1 phase=$2 t_us=$(now_us) load=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)" >>"$OUT/load"; }

# the points, scaled by ITER_PCT (at least one iteration, warm-up kept >= 0)
PTS=
for p in $POINTS; do
	PTS="$PTS $(echo "$p" | awk -F: -v pct="$ITER_PCT" '{
		i = int($2 * pct / 100); if (i < 1) i = 1;
		w = int($3 * pct / 100 + 0.5); if ($3 > 0 && w < 1) w = 1;
		printf "%s:%d:%d", $1, i, w }')"
done
SIZES=$(for p in $PTS; do echo "${p%%:*}"; done)

# shakedown's plan: one test per size, every seed op, one check pass
PLAN=$OUT/plan.yaml
{
	echo "# written by bench/cpu_bench.sh"
	echo "name: cpu_bench"
	echo "defaults: {dtype: float32, redop: sum, check: 1, timeout: 300}"
	echo "tests:"
	for p in $PTS; do
		IFS=: read -r s i w <<EOF
$p
EOF
		echo "  - {op: [$(echo $OPS | sed 's/ /, /g')], min_bytes: $s, max_bytes: $s, iters: $i, warmup: $w}"
	done
} >"$PLAN"
# the control for the check's cost: the same plan with no check pass
sed 's/check: 1/check: 0/; s/^name: cpu_bench/name: cpu_bench_nocheck/' \
	"$PLAN" >"$OUT/plan_nocheck.yaml"

HAVE_TORCH=1
if ! "$TORCH_PYTHON" -c 'import torch' 2>/dev/null; then
	HAVE_TORCH=0
	note "PyTorch gloo skipped: $TORCH_PYTHON cannot import torch (apt-get install python3-torch)"
fi

# one peer at one rank count in round $1
# tagged PEER ROUND CMD...: CMD's output lines, each tagged with the round
tagged() {
	file=$1 rnd=$2
	shift 2
	if "$@" >"$OUT/cur" 2>>"$OUT/$file.log"; then
		sed "s/^/round=$rnd /" "$OUT/cur" >>"$OUT/$file"
	else
		sed "s/^/round=$rnd /" "$OUT/cur" >>"$OUT/$file"
		note "round $rnd: the $file peer failed (see $file.log)"
	fi
}
run_raw() {
	tagged raw "$1" "$RAW" -n "$2" -o "$(echo $OPS | tr ' ' ,)" $PTS
}
# the control: raw Gloo again, as a peer of its own in the rotation, to
# score raw Gloo against itself by the goals shakedown is scored by
run_raw2() {
	tagged raw2 "$1" "$RAW" -n "$2" -o "$(echo $OPS | tr ' ' ,)" $PTS
}
run_sd() {
	w0=$(now_us)
	rc=0
	"$SD" run --plan "$PLAN" --local "$2" --db none --no-progress \
		--format json >"$OUT/sd.$1.$2" 2>>"$OUT/sd.log" || rc=$?
	w1=$(now_us)
	case $rc in
	0) ;;
	1)	# timed in full; some data was wrong: say which
		note "round $1: shakedown on $2 ranks found wrong data: $(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["wrong"]:
        print("%s %s %s %s B, %d wrong;" % (d["op"], d["algo"], "in place" if d["in_place"] else "out of place", d["size_bytes"], d["wrong"]), end=" ")
' "$OUT/sd.$1.$2")" ;;
	*)	note "round $1: shakedown run on $2 ranks failed with exit status $rc (see sd.log)"
		return 0 ;;
	esac
	echo "round=$1 ranks=$2 wall_us=$((w1 - w0))" >>"$OUT/wall"
	# the built-in plan (1K-16M, 10 iterations, every collective): the
	# one issue 14 measured its 38-40% outside the operations on
	w0=$(now_us)
	if "$SD" run --local "$2" --db none --no-progress --format json \
		>"$OUT/sdb.$1.$2" 2>>"$OUT/sd.log"; then
		echo "round=$1 ranks=$2 wall_us=$(($(now_us) - w0))" >>"$OUT/wall_builtin"
	else
		note "round $1: the built-in plan on $2 ranks failed (see sd.log)"
	fi
	# the control: the bench plan without its check pass
	w0=$(now_us)
	if "$SD" run --plan "$OUT/plan_nocheck.yaml" --local "$2" --db none \
		--no-progress --format json >"$OUT/sdn.$1.$2" 2>>"$OUT/sd.log"; then
		echo "round=$1 ranks=$2 wall_us=$(($(now_us) - w0))" >>"$OUT/wall_nocheck"
	else
		note "round $1: the bench plan without a check on $2 ranks failed (see sd.log)"
	fi
}
run_torch() {
	[ "$HAVE_TORCH" = 1 ] || return 0
	tagged "${3:-torch}" "$1" timeout 900 "$TORCH_PYTHON" "$TORCH" -n "$2" \
		--ops "$(echo $OPS | tr ' ' ,)" $PTS
}
# the control for the PyTorch goal: PyTorch again, scored against itself
run_torch2() {
	run_torch "$1" "$2" torch2
}
# trivial runs: the least each needs for one 1K all_reduce on 4 ranks
run_startup() {
	k=0
	while [ "$k" -lt "$STARTUP_RUNS" ]; do
		s0=$(now_us)
		"$RAW" -n 4 -o all_reduce -a opts_ring 1K:1:0 >/dev/null 2>&1 ||
			note "round $1: trivial gloo_raw run failed"
		s1=$(now_us)
		"$SD" run --local 4 --db none --no-progress --format json \
			--op all_reduce -b 1K -e 1K -n 1 -w 0 -c 0 \
			--no-in-place >/dev/null 2>&1 ||
			note "round $1: trivial shakedown run failed"
		s2=$(now_us)
		echo "round=$1 raw_us=$((s1 - s0)) sd_us=$((s2 - s1))" >>"$OUT/startup"
		k=$((k + 1))
	done
}
memcpy_drift() {
	"$MEMCPY" -m 0.5 64M | sed "s/^/phase=$1 /" >>"$OUT/drift"
}

START=$(now_us)
echo "# cpu_bench: $REPEATS rounds, ranks $RANKS, points$PTS; results in $OUT" >&2
memcpy_drift start
if command -v "$IPERF3" >/dev/null 2>&1; then
	port=$((20000 + $$ % 20000))
	"$IPERF3" -s -1 -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
	ipid=$!
	sleep 0.5
	if ! "$IPERF3" -c 127.0.0.1 -p "$port" -t 3 -J >"$OUT/iperf.json" 2>&1; then
		note "iperf3 client failed: $(head -c 200 "$OUT/iperf.json")"
		kill "$ipid" 2>/dev/null || true
	fi
	wait "$ipid" 2>/dev/null || true
else
	note "iperf3 skipped: not installed (apt-get install iperf3)"
fi

peers="raw sd raw2 torch torch2"
[ "$HAVE_TORCH" = 1 ] || peers="raw sd raw2"
round=1
while [ "$round" -le "$REPEATS" ]; do
	load "$round" before
	echo "# round $round of $REPEATS ($(( ($(now_us) - START) / 1000000 )) s)" >&2
	p0=$(now_us)
	tagged memcpy "$round" "$MEMCPY" -m 0.05 $SIZES
	run_startup "$round"
	echo "round=$round peer=memcpy+startup ranks=4 wall_us=$(($(now_us) - p0))" >>"$OUT/peers"
	for n in $RANKS; do
		for peer in $peers; do
			p0=$(now_us)
			"run_$peer" "$round" "$n"
			echo "round=$round peer=$peer ranks=$n wall_us=$(($(now_us) - p0))" >>"$OUT/peers"
		done
	done
	load "$round" after
	# the next round starts with the next peer
	peers="${peers#* } ${peers%% *}"
	round=$((round + 1))
done
memcpy_drift end
END=$(now_us)

python3 - "$OUT" "$START" "$END" "$HAVE_TORCH" <<'PY'
import glob, json, os, statistics, sys
out, start, end, have_torch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"

def kv(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)

def lines(name):
    p = os.path.join(out, name)
    return [l for l in open(p)] if os.path.exists(p) else []

def stat(xs):
    return statistics.median(xs), min(xs), max(xs)

def fmt(xs, spec="%.3f"):
    m, lo, hi = stat(xs)
    return (spec + " (" + spec + "-" + spec + ")") % (m, lo, hi)

def size_name(b):
    for u, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return "%d %s" % (b // k, u)
    return "%d B" % b

OPS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
       "broadcast", "pt2pt"]

# raw[(n, op, size)][(algo, placement)] = [(time_us, busbw), ...]; raw2:
# the control's second run of the same loops in each round
def raw_of(name):
    r = {}
    for l in lines(name):
        if not l.startswith("round="):
            continue
        f = kv(l)
        k = (int(f["ranks"]), f["op"], int(f["size_bytes"]))
        r.setdefault(k, {}).setdefault((f["algo"], f["placement"]), []).append(
            (float(f["time_us"]), float(f["busbw_gbs"])))
    return r
raw, raw2 = raw_of("raw"), raw_of("raw2")

def json_rows(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]

def inside_of(rows):
    """sum of time_us x (iters + warm-up + 1 check, if checked) of a
    run's rows"""
    return sum(d["time_us"] * (d["iters"] + d["warmup_iters"] +
                               (1 if d["checked"] else 0))
               for d in rows)

def walls_of(wall, prefix):
    w, ins = {}, {}
    for l in lines(wall):
        f = kv(l)
        k = (int(f["round"]), int(f["ranks"]))
        w[k] = int(f["wall_us"])
        ins[k] = inside_of(json_rows(os.path.join(out, "%s.%d.%d" % ((prefix,) + k))))
    return w, ins
builtin_wall, builtin_inside = walls_of("wall_builtin", "sdb")
nocheck_wall, nocheck_inside = walls_of("wall_nocheck", "sdn")
# raw Gloo's own loop, as a control: its wall in a round (lines "peers")
# against time_us x (iters + warm-up) of its rows (it checks nothing)
rawloop_wall, rawloop_inside = {}, {}
for l in lines("peers"):
    f = kv(l)
    if f["peer"] == "raw":
        rawloop_wall[(int(f["round"]), int(f["ranks"]))] = int(f["wall_us"])
for l in lines("raw"):
    f = kv(l)
    if l.startswith("round=") and "time_us" in f:
        k = (int(f["round"]), int(f["ranks"]))
        rawloop_inside[k] = rawloop_inside.get(k, 0.0) + float(
            f["time_us"]) * (int(f["iters"]) + int(f["warmup"]))

# sd[(n, op, size, in_place)] = [(time_us, busbw, ds_busbw_gbps, algo)]
sd, plan_wall, plan_inside = {}, {}, {}
for p in sorted(glob.glob(os.path.join(out, "sd.*.*"))):
    if p.endswith(".log"):
        continue
    rnd, n = p.rsplit(".", 2)[-2:]
    rows = json_rows(p)
    for d in rows:
        k = (d["nranks"], d["op"], d["size_bytes"], d["in_place"])
        sd.setdefault(k, []).append(
            (d["time_us"], d["busbw_gbs"], d["ds_busbw_gbps"], d["algo"]))
    plan_inside[(int(rnd), int(n))] = inside_of(rows)
for l in lines("wall"):
    f = kv(l)
    plan_wall[(int(f["round"]), int(f["ranks"]))] = int(f["wall_us"])

torch2 = {}
for l in lines("torch2"):
    if " op=" in l and "skipped:" not in l:
        f = kv(l)
        torch2.setdefault((int(f["ranks"]), f["op"], int(f["size_bytes"])),
                          []).append(float(f["ds_busbw_gbps"]))
torch_control = []  # (shakedown passes, torch2 passes)
torch, torch_api, torch_skip = {}, {}, set()
for l in lines("torch"):
    if "skipped:" in l:
        torch_skip.add(l.split(" gloo: ")[1].split(" skipped")[0]
                       + "|" + l.split("skipped: ", 1)[1].strip())
        continue
    if " op=" not in l:
        continue
    f = kv(l)
    k = (int(f["ranks"]), f["op"], int(f["size_bytes"]))
    torch.setdefault(k, []).append(
        (float(f["time_us"]), float(f["ds_busbw_gbps"])))
    torch_api[f["op"]] = f["api"]

cells = []  # (pass?) for the summary
same_cells = []  # (passes against the best, against the same algorithm)
control = []  # (shakedown passes, raw2 with shakedown's algorithm passes,
               # metric, raw2's own best passes)
def verdict(ok):
    cells.append(ok)
    return "pass" if ok else "**FAIL**"

print("# cpu_bench: shakedown against raw Gloo, PyTorch gloo, memcpy, iperf3")
print()
print("Sitting of %.1f min on %d CPUs; medians (min-max) over the rounds; "
      "busbw in GB/s as nccl-tests (size = max(send, recv) bytes per "
      "rank), DeepSpeed busbw in Gbps as its get_bw." %
      ((end - start) / 60e6, os.cpu_count()))
for l in lines("notes"):
    print("- note: " + l.strip())
print()

print("## Against raw Gloo (best algorithm per cell, like placement)")
print()
print("busbw goal >= 1.0x at >= 1 MiB; time goal <= 1.0x at 1 KiB and "
      "64 KiB.  Raw legacy classes run in place and are compared with "
      "shakedown's in-place row, options-based ones out of place with its "
      "out-of-place row.  The last column sets shakedown against raw "
      "Gloo's run of the algorithm shakedown ran, where raw Gloo has it in "
      "that placement: the same Gloo call on both sides, so a ratio there "
      "is the loop's cost or the sitting's noise, while a gap against the "
      "best but not against the same algorithm is auto's choice (or the "
      "best of several noisy medians).  It does not change the verdict.")
print()
print("| ranks | op | size | goal | raw best (placement) | raw | shakedown "
      "(algo) | ratio | verdict | raw, same algorithm: ratio |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for (n, op, size) in sorted(raw, key=lambda k: (k[0], OPS.index(k[1]), k[2])):
    algos = raw[(n, op, size)]
    for metric, goal in (("busbw", size >= (1 << 20)),
                         ("time", size <= (64 << 10))):
        if not goal:
            continue
        i = 1 if metric == "busbw" else 0
        pick = max if metric == "busbw" else min
        # a ratio meets the goal: busbw at or above, time at or below
        meets = (lambda r: r >= 1.0) if metric == "busbw" else \
            (lambda r: r <= 1.0)
        best = pick(algos, key=lambda a: statistics.median(x[i] for x in algos[a]))
        rv = [x[i] for x in algos[best]]
        mine = sd.get((n, op, size, best[1] == "in"))
        if not mine:
            print("| %d | %s | %s | %s | %s (%s) | %s | missing | | **FAIL** |"
                  % (n, op, size_name(size), metric, best[0], best[1],
                     fmt(rv)))
            cells.append(False)
            continue
        sv = [x[i] for x in mine]
        algo = mine[0][3]
        ratio = statistics.median(sv) / statistics.median(rv)
        ok = meets(ratio)
        g, spec = (">= 1.0", "%.3f") if metric == "busbw" else ("<= 1.0", "%.1f")
        unit = " GB/s" if metric == "busbw" else " us"
        same = algos.get((algo, best[1]))
        if same:
            sr = statistics.median(sv) / statistics.median(x[i] for x in same)
            same_txt = "x%.2f" % sr
            same_cells.append((ok, meets(sr)))
        else:
            same_txt = "(not in this placement)"
        # the control: raw Gloo's second run of the same call, scored
        # against the same best as shakedown
        again = raw2.get((n, op, size), {}).get((algo, best[1]))
        if again:
            cr = statistics.median(x[i] for x in again) / statistics.median(rv)
            a2 = raw2[(n, op, size)]
            b2 = pick(statistics.median(x[i] for x in v) for v in a2.values())
            br = b2 / statistics.median(rv)
            control.append((ok, meets(cr), metric, meets(br)))
        print("| %d | %s | %s | %s %s | %s (%s) | %s%s | %s%s (%s) | x%.2f | %s | %s |"
              % (n, op, size_name(size), metric, g, best[0], best[1],
                 fmt(rv, spec), unit, fmt(sv, spec), unit, algo, ratio,
                 verdict(ok), same_txt))
print()

if same_cells:
    print("Against raw Gloo's run of the algorithm shakedown ran (same "
          "placement): %d of %d cells at or better than it; against the "
          "best algorithm: %d of those %d." %
          (sum(1 for c in same_cells if c[1]), len(same_cells),
           sum(1 for c in same_cells if c[0]), len(same_cells)))
    print()

if raw2:
    print("## The control: raw Gloo against itself")
    print()
    print("Raw Gloo runs twice in each round, as two peers of the "
          "rotation (raw and raw').  Scored by the same goals as "
          "shakedown, raw' running the algorithm shakedown ran (the same "
          "Gloo call, with no cost of shakedown's at all) against raw's "
          "best: what a shakedown level with raw Gloo would score in this "
          "sitting, given its noise and the best of several medians; and "
          "raw' taking its own best algorithm, as raw's best is taken.  "
          "Cells where raw Gloo has shakedown's algorithm in the best's "
          "placement.")
    print()
    print("| goal | cells | shakedown passes | raw' (shakedown's algorithm) "
          "passes | raw' (its own best) passes |")
    print("| --- | --- | --- | --- | --- |")
    for metric in ("busbw", "time"):
        cs = [c for c in control if c[2] == metric]
        if cs:
            print("| %s | %d | %d | %d | %d |" % (
                "busbw >= 1.0x at >= 1 MiB" if metric == "busbw"
                else "time <= 1.0x at 1K and 64K", len(cs),
                sum(1 for c in cs if c[0]), sum(1 for c in cs if c[1]),
                sum(1 for c in cs if c[3])))
    # every call both runs have: raw' against raw, busbw at >= 1 MiB,
    # time below
    rs = []
    for k in raw:
        for ap, v in raw[k].items():
            w = raw2.get(k, {}).get(ap)
            if not w:
                continue
            if k[2] >= (1 << 20):
                rs.append(statistics.median(x[1] for x in w) /
                          statistics.median(x[1] for x in v))
            else:
                rs.append(statistics.median(x[0] for x in v) /
                          statistics.median(x[0] for x in w))
    if rs:
        rs.sort()
        q = lambda p: rs[min(len(rs) - 1, int(p * len(rs)))]
        print()
        print("Every Gloo call of both runs, raw' against raw (busbw ratio "
              "at >= 1 MiB, inverse time ratio below, so > 1 is raw' "
              "faster): %d calls, median x%.3f, 10th-90th percentile "
              "x%.2f-x%.2f, %d within 5%%, %d at or above x1.0." %
              (len(rs), statistics.median(rs), q(0.1), q(0.9),
               sum(1 for r in rs if abs(r - 1) <= 0.05),
               sum(1 for r in rs if r >= 1.0)))
    print()

print("## Against PyTorch gloo (DeepSpeed's method, DeepSpeed's placement)")
print()
if not have_torch:
    print("Skipped: torch is not installed for the benchmark's python.")
else:
    print("busbw goal >= 1.0x at every size; both sides are DeepSpeed's "
          "busbw (get_bw) of the same buffers, shakedown's row of the "
          "placement PyTorch's call has (in place for all_reduce, "
          "broadcast and send/recv, which work on one tensor; out of place "
          "for all_gather and all_to_all_single), as --format deepspeed "
          "shows it.  PyTorch calls: %s." %
          ", ".join("%s %s" % (o, torch_api[o]) for o in OPS if o in torch_api))
    for s in sorted(torch_skip):
        o, why = s.split("|", 1)
        print("%s: not in PyTorch's gloo backend (%s); no cell." % (o, why))
    print()
    print("| ranks | op | size | torch time | torch busbw | shakedown busbw "
          "| ratio | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (n, op, size) in sorted(torch, key=lambda k: (k[0], OPS.index(k[1]), k[2])):
        tv = torch[(n, op, size)]
        # the placement of PyTorch's call (src/sink_deepspeed.c,
        # sd_ds_in_place)
        mine = sd.get((n, op, size, op in ("all_reduce", "broadcast", "pt2pt")))
        if not mine:
            continue
        tb = [x[1] for x in tv]
        sb = [x[2] for x in mine]
        ratio = statistics.median(sb) / statistics.median(tb)
        t2 = torch2.get((n, op, size))
        if t2:
            torch_control.append((ratio >= 1.0, statistics.median(t2) /
                                  statistics.median(tb) >= 1.0))
        print("| %d | %s | %s | %s us | %s Gbps | %s Gbps | x%.2f | %s |" %
              (n, op, size_name(size), fmt([x[0] for x in tv], "%.1f"),
               fmt(tb), fmt(sb), ratio, verdict(ratio >= 1.0)))
    if torch_control:
        print()
        print("The control: PyTorch runs twice in each round (torch and "
              "torch'); scored by the same goal, torch' is at or above "
              "torch in %d of %d cells, shakedown in %d of those %d." %
              (sum(1 for c in torch_control if c[1]), len(torch_control),
               sum(1 for c in torch_control if c[0]), len(torch_control)))
print()

print("## Time outside the timed operations (goal <= 10% of the plan's wall)")
print()
print("The bench plan: every seed op at every size of the sitting, in and "
      "out of place, one check pass.  The built-in plan: `shakedown run "
      "--local N` (every collective, 1 KiB-16 MiB by 4x, 10 iterations, 3 "
      "warm-up, in and out of place, one check pass).  Inside = sum of "
      "time_us x (iters + warmup + 1 check); outside = the run's wall "
      "(start-up and exit included) less that.  The control runs the "
      "bench plan with no check pass (check: 0, no fill before it, no "
      "verify): the difference is what the bit-exact check costs beyond "
      "its operation.  Raw Gloo's own loop (`gloo_raw`, every algorithm "
      "of every op at the sitting's points, no check) is scored the same "
      "way: its wall in the round against time_us x (iters + warmup) of "
      "its rows.")
print()
print("| plan | ranks | plan wall | inside operations | outside | verdict |")
print("| --- | --- | --- | --- | --- | --- |")
for name, walld, insided in (("bench", plan_wall, plan_inside),
                             ("built-in", builtin_wall, builtin_inside),
                             ("bench, no check (control)", nocheck_wall,
                              nocheck_inside),
                             ("raw Gloo's own loop (control)", rawloop_wall,
                              rawloop_inside)):
    for n in sorted({k[1] for k in walld}):
        ks = [k for k in walld if k[1] == n and k in insided]
        if not ks:
            continue
        walls = [walld[k] / 1e6 for k in ks]
        insides = [insided[k] / 1e6 for k in ks]
        fracs = [1 - insided[k] / walld[k] for k in ks]
        m = statistics.median(fracs)
        print("| %s | %d | %s s | %s s | %s%% | %s |" %
              (name, n, fmt(walls, "%.2f"), fmt(insides, "%.2f"),
               fmt([100 * f for f in fracs], "%.1f"),
               "(not a goal)" if "control" in name else verdict(m <= 0.10)))
print()

print("## Start-up (goal: a trivial --local 4 run within 20 ms of raw Gloo's)")
print()
st = [kv(l) for l in lines("startup")]
if st:
    r = [int(f["raw_us"]) / 1e3 for f in st]
    s = [int(f["sd_us"]) / 1e3 for f in st]
    d = statistics.median(s) - statistics.median(r)
    print("One 1 KiB all_reduce on 4 ranks, wall time of the whole run: raw "
          "Gloo (one context, opts_ring) against `shakedown run --local 4 "
          "-n 1 -w 0 -c 0 --no-in-place`.")
    print()
    print("| raw Gloo | shakedown | difference | verdict |")
    print("| --- | --- | --- | --- |")
    print("| %s ms | %s ms | %+.1f ms | %s |" %
          (fmt(r, "%.1f"), fmt(s, "%.1f"), d, verdict(d <= 20)))
print()

print("## Physical limits")
print()
mc = {}
for l in lines("memcpy"):
    f = kv(l)
    mc.setdefault(int(f["size_bytes"]), []).append(float(f["gbs"]))
ip = None
try:
    j = json.load(open(os.path.join(out, "iperf.json")))
    ip = j["end"]["sum_received"]["bits_per_second"] / 8e9
except Exception:
    pass
print("| size | memcpy GB/s | loopback TCP (iperf3, one stream, 3 s) |")
print("| --- | --- | --- |")
for size in sorted(mc):
    print("| %s | %s | %s |" % (size_name(size), fmt(mc[size], "%.2f"),
                                "%.3f GB/s" % ip if ip else "n/a"))
print()

print("## Machine load")
print()
print("| round | duration | loadavg before | loadavg after |")
print("| --- | --- | --- | --- |")
ld = {}
for l in lines("load"):
    f = kv(l)
    ld.setdefault(int(f["round"]), {})[f["phase"]] = f
for rnd in sorted(ld):
    b, a = ld[rnd].get("before"), ld[rnd].get("after")
    if not (b and a):
        continue
    print("| %d | %.1f s | %s | %s |" %
          (rnd, (int(a["t_us"]) - int(b["t_us"])) / 1e6,
           b["load"].replace(",", " "), a["load"].replace(",", " ")))
pw = {}
for l in lines("peers"):
    f = kv(l)
    pw.setdefault((f["peer"], int(f["ranks"])), []).append(int(f["wall_us"]) / 1e6)
if pw:
    print()
    print("Wall time of each peer in a round: " + ", ".join(
        "%s on %d ranks %s s" % (p, n, fmt(v, "%.1f"))
        for (p, n), v in sorted(pw.items())) + ".")
dr = {kv(l)["phase"]: float(kv(l)["gbs"]) for l in lines("drift")}
if "start" in dr and "end" in dr:
    drift = 100 * (dr["end"] / dr["start"] - 1)
    print()
    print("memcpy drift check (64 MiB): %.2f GB/s at the start, %.2f GB/s at "
          "the end (%+.1f%%)%s." %
          (dr["start"], dr["end"], drift,
           "; more than 10%: the machine was not quiet" if abs(drift) > 10 else ""))
print()

print("## Raw Gloo, every algorithm (median busbw GB/s / time us)")
print()
for (n, op, size) in sorted(raw, key=lambda k: (k[0], OPS.index(k[1]), k[2])):
    algos = raw[(n, op, size)]
    row = ["%s(%s)=%.3f/%.1f" % (a, p, statistics.median(x[1] for x in v),
                                 statistics.median(x[0] for x in v))
           for (a, p), v in sorted(algos.items())]
    print("    %d %-14s %-7s %s" % (n, op, size_name(size), " ".join(row)))
print()
print("%d of %d cells pass." % (sum(cells), len(cells)))
PY
