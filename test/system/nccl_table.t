#!/bin/sh
# nccl_table.t - shakedown's table read the way readers of nccl-tests'
# output read it, and every row compared field by field with the row
# nccl-tests would print for the recorded numbers (issue 12, items 1 and
# 5).  The shapes are nccl-tests 2.19's own, from its src/:
#   util.cu writeBenchmarkLinePreamble  "%12li  %12li  %8s  %6s  %6s"
#   util.cu writeBenchmarkLineBody      "  %7s  %6s  %6s  %6g" (getFloatStr
#                                       7 and 6 wide), "    N/A" unchecked
#   util.cu writeResultHeader           the three header lines
#   util.cu writeResultFooter           "# %-20s : %d %s", "# %-20s : %g %s"
#   util.cu parseRankInfo               "#  Rank %d Group %d Pid %d on %1024s
#                                       device %d [%128[^]]] %1024[^\n]"
#   common.cu test_typenames            int8 ... half float double bfloat16
#   common.cu TimeTest                  the preamble's size is max(send,
#                                       recv) bytes, its count paramcount;
#                                       out of place, then in place, always
#   *.cu GetCollByteCount               per collective: a rank's block is
#                                       (count/nranks) & ~(16/eltSize - 1)
# Every collective, several types, both placements; the footer's last field
# is the number (the way Azure NHC's check_nccl_allreduce and the scripts
# that take $NF read it).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v python3 >/dev/null || skip_all "python3 is needed to read the table"

OPS=all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,gather,scatter,sendrecv,pt2pt
run -t 180 $SHAKEDOWN run --no-progress --db "$TMPD/r.db" --local 3 --op "$OPS" \
	-d float32,float16,float64,int8,uint8,int32,int64 -b 1K -e 16K -f 4 -n 2 -w 1
is "$rc" 0 "every collective in every type Gloo has on 3 ranks: exit 0"
printf '%s\n' "$out" >"$TMPD/table.txt"

check=$(python3 - "$TMPD/table.txt" "$TMPD/r.db" <<'PY'
import re, sqlite3, sys
lines = open(sys.argv[1]).read().split("\n")
bad = []
# the header, as writeResultHeader prints it (no per-iteration columns,
# no timestamp: "%*s" of width 0 leaves the space before it)
h1 = "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", "")
h2 = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s" % (
    "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
    "#wrong", "time", "algbw", "busbw", "#wrong", "")
h3 = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s" % (
    "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "",
    "(us)", "(GB/s)", "(GB/s)", "", "")
for h, name in ((h1, "title"), (h2, "names"), (h3, "units")):
    n = lines.count(h)
    if n != 70:
        bad.append("header %s line %d times, not 70" % (name, n))
# rows: the shape a sscanf("%zu %zu %s %s %d %s %s %s %s %s %s %s %s")
# reader (or a split into 13 fields) takes
nccl_types = {"float", "half", "double", "int8", "uint8", "int32", "int64"}
num = r"(?:[0-9.]+(?:e[+-][0-9]+)?)"
# every op is timed and checked in both placements: no N/A anywhere
row = re.compile(r"^ {0,11}[0-9]{1,12}  {0,11}[0-9]{1,12}  +(\S+)  +(\S+)  +(-?[0-9]+)"
                 r"  +(%s)  +(%s)  +(%s)  +([0-9]+)"
                 r"  +(%s)  +(%s)  +(%s)  +([0-9]+)$" % ((num,) * 6))
rows = [l for l in lines if l and not l.startswith("#") and row.match(l)]
others = [l for l in lines if l and not l.startswith("#") and not row.match(l)]
if others:
    bad.append("%d lines neither comment nor row: %r" % (len(others), others[0]))
for l in rows:
    f = l.split()
    if len(f) != 13:
        bad.append("row of %d fields: %r" % (len(f), l))
    if f[2] not in nccl_types:
        bad.append("type %r is not nccl-tests'" % f[2])
    # the preamble's widths, exactly
    if l[:12].strip() != f[0] or l[14:26].strip() != f[1] or \
       l[28:36].strip() != f[2] or l[38:44].strip() != f[3] or \
       l[46:52].strip() != f[4]:
        bad.append("preamble columns off: %r" % l)
if len(rows) != 210:
    bad.append("%d rows, not 210 (10 ops x 7 types x 3 sizes)" % len(rows))
# footers
oob = [l for l in lines if l.startswith("# Out of bounds values")]
avg = [l for l in lines if l.startswith("# Avg bus bandwidth")]
for l in oob:
    if not re.match(r"^# Out of bounds values : [0-9]+ (OK|FAILED)$", l):
        bad.append("footer %r" % l)
for l in avg:
    if not re.match(r"^# Avg bus bandwidth    : [0-9.e+-]+ $", l):
        bad.append("footer %r" % l)
    try:
        float(l.split()[-1])  # the last field, as $NF readers take it
    except ValueError:
        bad.append("last field of %r is not a number" % l)
if len(oob) != 70 or len(avg) != 70:
    bad.append("%d and %d footers, not 70" % (len(oob), len(avg)))
# rank lines, as parseRankInfo's sscanf reads them
rk = re.compile(r"^#  Rank +(-?\d+) Group +(-?\d+) Pid +(-?\d+) on +(\S{1,1024}) device +(-?\d+) \[([^\]]{1,128})\] ([^\n]{1,1024})$")
ranks = [rk.match(l) for l in lines if l.startswith("#  Rank")]
if len(ranks) != 3 or not all(ranks):
    bad.append("rank lines: %r" % [l for l in lines if l.startswith("#  Rank")])
elif [int(m.group(1)) for m in ranks] != [0, 1, 2]:
    bad.append("ranks out of order")

# golden rows: each test's rows are, character for character, what
# nccl-tests prints for the numbers the database recorded
def float_str(v, width):              # util.cu getFloatStr
    for f in ("%*.2f", "%*.1f", "%*.0f"):
        s = f % (width, v)
        if len(s) <= width:
            return s
    return (("%*.1e" if width >= 7 else "%*.0e") % (width, v))[:width]
def body(m):                          # util.cu writeBenchmarkLineBody
    t, alg, bus, checked, wrong = m
    if checked:
        return "  %7s  %6s  %6s  %6g" % (float_str(t, 7), float_str(alg, 6),
                                        float_str(bus, 6), float(wrong))
    return "  %7s  %6s  %6s    N/A" % (float_str(t, 7), float_str(alg, 6),
                                      float_str(bus, 6))
nccl_name = {"float32": "float", "float16": "half", "float64": "double",
             "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64"}
elt = {"float32": 4, "float16": 2, "float64": 8, "int8": 1, "uint8": 1,
       "int32": 4, "int64": 8}
def counts(op, size, e, n):           # each collective's GetCollByteCount
    count = size // e
    base = (count // n) & ~(16 // e - 1)
    send, recv, param = {
        "all_gather": (base, base * n, base), "gather": (base, base * n, base),
        "reduce_scatter": (base * n, base, base), "scatter": (base * n, base, base),
        "all_to_all": (base * n, base * n, base),
    }.get(op, (count, count, count))
    return max(send, recv) * e, param
db = sqlite3.connect(sys.argv[2])
meas = {}
for r in db.execute("""SELECT t.test_index, t.op, t.dtype, t.redop, t.root,
        m.size_bytes, m.count, m.in_place, m.time_us, m.algbw_gbs,
        m.busbw_gbs, m.checked, m.wrong FROM measurements m
        JOIN tests t ON t.id = m.test_id ORDER BY t.test_index, m.size_bytes,
        m.in_place"""):
    meas.setdefault(r[0], []).append(r)
test, blocks = None, {}
for l in lines:
    h = re.match(r"^# Test (\d+): ", l)
    if h:
        test = int(h.group(1)) - 1
    elif l and not l.startswith("#") and test is not None:
        blocks.setdefault(test, []).append(l)
golden = 0
fields = ("size", "count", "type", "redop", "root", "time", "algbw", "busbw",
          "#wrong", "time (in-place)", "algbw (in-place)", "busbw (in-place)",
          "#wrong (in-place)")
requested = (1024, 4096, 16384)
for ti, ms in sorted(meas.items()):
    got = blocks.get(ti, [])
    want = []
    for k in range(0, len(ms), 2):
        o, i = ms[k], ms[k + 1]
        if o[7] != 0 or i[7] != 1 or o[5] != i[5]:
            bad.append("test %d: size %d not in both placements" % (ti, o[5]))
            continue
        op, dt = o[1], o[2]
        size, cnt = counts(op, requested[k // 2], elt[dt], 3)
        if (o[5], o[6]) != (size, cnt):
            bad.append("%s %s: size/count %d/%d, nccl-tests' %d/%d" %
                       (op, dt, o[5], o[6], size, cnt))
        want.append("%12li  %12li  %8s  %6s  %6s" % (o[5], o[6], nccl_name[dt],
                    o[3] or "none", "%6i" % (-1 if o[4] is None else o[4]))
                    + body(o[8:13]) + body(i[8:13]))
    if len(got) != len(want):
        bad.append("test %d: %d rows, the database has %d" % (ti, len(got), len(want)))
    for g, w in zip(got, want):
        if g == w:
            golden += 1
            continue
        gf, wf = g.split(), w.split()
        diff = [fields[j] for j in range(min(len(gf), len(wf))) if gf[j] != wf[j]]
        bad.append("test %d row differs in %s: %r, want %r" % (ti, diff or "spacing", g, w))
if len(meas) != 70:
    bad.append("%d tests in the database, not 70" % len(meas))
print(len(rows), golden, "; ".join(bad[:5]) or "ok")
PY
)
is "$check" "210 210 ok" "210 rows, each the row nccl-tests prints for the recorded numbers; headers, footers and rank lines read as nccl-tests' readers read them"

# a reader that takes every line between the last header naming
# "out-of-place" and the last "Out of bounds values" footer as a row and
# its busbw from the sixth field from the end (SuperBench's nccl-bw
# parser, cuda_nccl_bw_performance.py _process_raw_result) reads the last
# test, with shakedown's additions (a planted wrong element, --per-iter
# percentiles) printed after the footer, not among the rows
SHAKEDOWN_FAULT=rank=1,kind=corrupt,size=4K,index=3 \
run -t 60 $SHAKEDOWN run --no-progress --db none --local 3 --op all_reduce,sendrecv \
	-b 1K -e 16K -f 4 -n 2 -w 1 --per-iter
is "$rc" 1 "a planted wrong element: exit 1"
printf '%s\n' "$out" >"$TMPD/wrong.txt"
check=$(python3 - "$TMPD/wrong.txt" <<'PY'
import re, sys
content = open(sys.argv[1]).read().splitlines()
head = oob = -1
for i, l in enumerate(content):
    if "out-of-place" in l:
        head = i
    if "Out of bounds values" in l:
        oob = i
rows = content[head + 3:oob]
busbw = []
for l in rows:
    f = re.sub(r" +", " ", l.strip(" ")).split(" ")
    if len(f) != 13:
        print("not a row between the header and the footer: %r" % l)
        sys.exit()
    busbw.append(float(f[-6]))
extra = [l for l in content if "per iteration" in l or "WRONG" in l]
print(len(busbw), len(extra), "ok" if all(b >= 0 for b in busbw) else "busbw")
PY
)
is "$check" "3 13 ok" "a SuperBench-shaped reader gets the last test's 3 rows; the 12 per-iteration lines and the wrong element are comments after the footers"
like "$out" "# Out of bounds values : 1 FAILED
# Avg bus bandwidth    : [0-9.e+-]+ 
# 1024 B out of place per iteration" "the additions follow the footer"

# the type names nccl-tests takes on its command line work here too
run -t 60 $SHAKEDOWN run --no-progress --db none --local 2 --op all_reduce -d float,half,double -e 1K -n 1 -w 0
is "$rc" 0 "-d float,half,double (nccl-tests' names): exit 0"
like "$out" "^ +1024 +256 +float +sum +-1 " "rows say float"
done_testing
