#!/bin/sh
# nccl_table.t - shakedown's table read the way readers of nccl-tests'
# output read it (issue 12, item 1, first part).  The shapes are nccl-tests
# 2.19's own, from ../shared/anchors/nccl-tests/src:
#   util.cu writeBenchmarkLinePreamble  "%12li  %12li  %8s  %6s  %6s"
#   util.cu writeBenchmarkLineBody      "  %7s  %6s  %6s  %6g" (getFloatStr
#                                       7 and 6 wide), "    N/A" unchecked
#   util.cu writeResultHeader           the three header lines
#   util.cu writeResultFooter           "# %-20s : %d %s", "# %-20s : %g %s"
#   util.cu parseRankInfo               "#  Rank %d Group %d Pid %d on %1024s
#                                       device %d [%128[^]]] %1024[^\n]"
#   common.cu test_typenames            int8 ... half float double bfloat16
# Every collective, several types, both placements; the footer's last field
# is the number (the way Azure NHC's check_nccl_allreduce and the scripts
# that take $NF read it).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v python3 >/dev/null || skip_all "python3 is needed to read the table"

OPS=all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,gather,scatter,sendrecv,pt2pt
run -t 180 $SHAKEDOWN run --no-progress --db none --local 3 --op "$OPS" \
	-d float32,float16,float64,int8,int32 -b 1K -e 16K -f 4 -n 2 -w 1
is "$rc" 0 "every collective in five types on 3 ranks: exit 0"
printf '%s\n' "$out" >"$TMPD/table.txt"

check=$(python3 - "$TMPD/table.txt" <<'PY'
import re, sys
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
    if n != 50:
        bad.append("header %s line %d times, not 50" % (name, n))
# rows: the shape a sscanf("%zu %zu %s %s %d %s %s %s %s %s %s %s %s")
# reader (or a split into 13 fields) takes
nccl_types = {"float", "half", "double", "int8", "int32"}
num = r"(?:[0-9.]+(?:e[+-][0-9]+)?)"
row = re.compile(r"^ {0,11}[0-9]{1,12}  {0,11}[0-9]{1,12}  +(\S+)  +(\S+)  +(-?[0-9]+)"
                 r"  +(%s)  +(%s)  +(%s)  +([0-9]+|N/A)"
                 r"  +(%s|N/A)  +(%s|N/A)  +(%s|N/A)  +([0-9]+|N/A)$" % ((num,) * 6))
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
if len(rows) != 150:
    bad.append("%d rows, not 150 (10 ops x 5 types x 3 sizes)" % len(rows))
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
if len(oob) != 50 or len(avg) != 50:
    bad.append("%d and %d footers, not 50" % (len(oob), len(avg)))
# rank lines, as parseRankInfo's sscanf reads them
rk = re.compile(r"^#  Rank +(-?\d+) Group +(-?\d+) Pid +(-?\d+) on +(\S{1,1024}) device +(-?\d+) \[([^\]]{1,128})\] ([^\n]{1,1024})$")
ranks = [rk.match(l) for l in lines if l.startswith("#  Rank")]
if len(ranks) != 3 or not all(ranks):
    bad.append("rank lines: %r" % [l for l in lines if l.startswith("#  Rank")])
elif [int(m.group(1)) for m in ranks] != [0, 1, 2]:
    bad.append("ranks out of order")
print(len(rows), "; ".join(bad[:5]) or "ok")
PY
)
is "$check" "150 ok" "150 rows, headers, footers and rank lines read as nccl-tests' readers read them"

# the type names nccl-tests takes on its command line work here too
run -t 60 $SHAKEDOWN run --no-progress --db none --local 2 --op all_reduce -d float,half,double -e 1K -n 1 -w 0
is "$rc" 0 "-d float,half,double (nccl-tests' names): exit 0"
like "$out" "^ +1024 +256 +float +sum +-1 " "rows say float"
done_testing
