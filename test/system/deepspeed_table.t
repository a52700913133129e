#!/bin/sh
# deepspeed_table.t - `run --format deepspeed` read the way readers of the
# DeepSpeed communication benchmark's output read it, in both its modes
# (default and --raw), every row checked field by field against the row
# DeepSpeed would print for the values the database recorded.  The rules
# are DeepSpeed's own, from deepspeedai/DeepSpeedExamples
# benchmarks/communication (microsoft/DeepSpeed before it, same path):
#   utils.py print_header        title "\n---- Performance of {comm_op} on
#                                {world_size} devices " + 57 dashes,
#                                world_size 2 for pt2pt; names
#                                "{:20s} {:25s} {:20s} {:20s} {:20s}" of
#                                'Size (Bytes)', 'Description', 'Duration'
#                                (--raw: 'Duration (us)'), 'Throughput
#                                (Gbps)', 'BusBW (Gbps)'; then 100 dashes
#   utils.py get_metric_strings  f'{tput / 1e9:.3f}', f'{busbw /1e9:.3f}';
#                                the duration f'{us:.3f} us' when us < 1e3,
#                                else f'{ms:.3f} ms'; --raw: f'{us:.3f}'
#   utils.py convert_size        "%s %s" % (round(bytes / 1024**i, 2),
#                                unit), i = floor(math.log(bytes, 1024))
#   utils.py get_bw              the Gbps factors (checked against the
#                                database's values)
#   all_reduce.py, all_gather.py, all_to_all.py, broadcast.py, pt2pt.py
#     timed_<op>                 f"{size:<20} {desc:25s} {duration_str:20s}
#                                {tput_str:20s} {busbw_str:20s}", size the
#                                input tensor's bytes (convert_size'd
#                                unless --raw), desc
#                                f'{input.nelement()}x{input.element_size()}'
# shakedown's own lines (the run, the test's labels, verdicts, the
# summary) are `#` comments, which the reader skips.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v python3 >/dev/null || skip_all "python3 is needed to read the table"
python3 -c 'import sqlite3' 2>/dev/null ||
	skip_all "python3 has no sqlite3 module to read the database"

OPS=all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,gather,scatter,sendrecv,pt2pt
TYPES=float32,float16,float64,int8,uint8,int32,int64
# 10 ops x 7 types (every one Gloo has) x 3 sizes (1K, 8K, 64K)
ROWS=210

run -t 120 $SHAKEDOWN run --no-progress --local 3 --db "$TMPD/r.db" \
	--format deepspeed --op "$OPS" -d "$TYPES" -b 1K -e 64K -f 8 -n 2 -w 1
is "$rc" 0 "every collective in every Gloo type on 3 ranks, DeepSpeed's table: exit 0"
printf '%s\n' "$out" >"$TMPD/default.txt"

# --raw before --format: the order does not matter
run -t 120 $SHAKEDOWN run --no-progress --local 3 --db "$TMPD/raw.db" --raw \
	--format deepspeed --op "$OPS" -d "$TYPES" -b 1K -e 64K -f 8 -n 2 -w 1
is "$rc" 0 "the same with --raw: exit 0"
printf '%s\n' "$out" >"$TMPD/raw.txt"

cat >"$TMPD/read.py" <<'PY'
import math, re, sqlite3, sys

out_file, db_file, mode, want_rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
raw = mode == "raw"
bad = []

# --- DeepSpeed's format rules, re-implemented -------------------------
UNITS = ("B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")

def ds_size(nbytes):            # utils.py convert_size
    if nbytes == 0:
        return "0B"
    k = int(math.floor(math.log(nbytes, 1024)))
    return "%s %s" % (round(nbytes / math.pow(1024, k), 2), UNITS[k])

def ds_duration(us):            # utils.py get_metric_strings
    if raw:
        return f"{us:.3f}"
    return f"{us:.3f} us" if us < 1e3 else f"{us / 1e3:.3f} ms"

def ds_title(op, devices):      # utils.py print_header
    return f"---- Performance of {op} on {devices} devices " + "-" * 57

DUR = "Duration (us)" if raw else "Duration"
HEADER = f"{'Size (Bytes)':20s} {'Description':25s} {DUR:20s} {'Throughput (Gbps)':20s} {'BusBW (Gbps)':20s}"
RULE = "-" * 100
FIELDS = ("size", "description", "duration", "throughput", "busbw")

def ds_row(m):                  # timed_<op>'s print
    size = m["ds_size_bytes"] if raw else ds_size(m["ds_size_bytes"])
    desc = m["ds_description"]
    dur = ds_duration(m["time_us"])
    tput = f"{m['ds_throughput_gbps']:.3f}"
    busbw = f"{m['ds_busbw_gbps']:.3f}"
    return f"{size:<20} {desc:25s} {dur:20s} {tput:20s} {busbw:20s}"

# --- the reader: a DeepSpeed log, shakedown's '#' lines skipped --------
TITLE = re.compile(r"^---- Performance of (\w+) on (\d+) devices (-+)$")
WIDTHS = (20, 25, 20, 20, 20)

def split_row(line):
    """The five fields at DeepSpeed's widths, each left-aligned and
    followed by one space (the last padded to its width)."""
    fields, at = [], 0
    for k, w in enumerate(WIDTHS):
        cell = line[at:at + w]
        if len(cell) != w or (k < 4 and line[at + w:at + w + 1] != " "):
            return None
        if cell != cell.strip().ljust(w) or not cell.strip():
            return None
        fields.append(cell.strip())
        at += w + 1
    return fields if len(line) == at - 1 else None

comments = [l for l in open(out_file).read().split("\n") if l.startswith("#")]
lines = [l for l in open(out_file).read().split("\n") if not l.startswith("#")]
blocks = []                     # (op, devices, [row fields], [row lines])
i = 0
while i < len(lines):
    l = lines[i]
    if l == "":
        i += 1
        continue
    t = TITLE.match(l)
    if not t:
        bad.append("line %d is neither a title nor in a block: %r" % (i, l))
        i += 1
        continue
    if len(t.group(3)) != 57:
        bad.append("title with %d trailing dashes: %r" % (len(t.group(3)), l))
    if i == 0 or lines[i - 1] != "":
        bad.append("no blank line before %r" % l)
    if lines[i + 1:i + 2] != [HEADER]:
        bad.append("header after %r is %r" % (l, lines[i + 1:i + 2]))
    if lines[i + 2:i + 3] != [RULE]:
        bad.append("rule after %r is %r" % (l, lines[i + 2:i + 3]))
    rows, texts = [], []
    i += 3
    while i < len(lines) and lines[i] != "" and not TITLE.match(lines[i]):
        f = split_row(lines[i])
        if f is None:
            bad.append("row not in DeepSpeed's columns: %r" % lines[i])
        else:
            rows.append(f)
            texts.append(lines[i])
        i += 1
    blocks.append((t.group(1), int(t.group(2)), rows, texts))

# --- what the database recorded ----------------------------------------
db = sqlite3.connect(db_file)
db.row_factory = sqlite3.Row
tests = db.execute("SELECT t.* FROM tests t JOIN runs r ON r.id = t.run_id "
                   "ORDER BY t.test_index").fetchall()
ELEM = {"float32": 4, "float16": 2, "float64": 8, "int8": 1, "uint8": 1,
        "int32": 4, "int64": 8}
if len(blocks) != len(tests):
    bad.append("%d blocks in the output, %d tests in the database" % (len(blocks), len(tests)))
nrows = 0
ops = set()
for (op, devices, rows, texts), t in zip(blocks, tests):
    ops.add(op)
    if op != t["op"]:
        bad.append("test %d: title op %s, database %s" % (t["test_index"], op, t["op"]))
    want_dev = 2 if t["op"] == "pt2pt" else t["nranks"]
    if devices != want_dev:
        bad.append("%s: %d devices, want %d" % (op, devices, want_dev))
    # the placement DeepSpeed's call has: torch.distributed's all_reduce,
    # broadcast, reduce and send/recv work on one tensor, the others write
    # one of their own; shakedown's comment line before the title says it
    ip = 1 if t["op"] in ("all_reduce", "broadcast", "reduce", "pt2pt") else 0
    said = "rows in place" if ip else "rows out of place"
    if not any(l.startswith("# Test %d: " % (t["test_index"] + 1)) and l.endswith(said)
               for l in comments):
        bad.append("%s: the test's line does not say '%s'" % (op, said))
    ms = db.execute("SELECT * FROM measurements WHERE test_id = ? AND in_place = ? "
                    "ORDER BY size_bytes", (t["id"], ip)).fetchall()
    if len(rows) != len(ms):
        bad.append("%s %s: %d rows, %d measurements of placement %d" % (op, t["dtype"], len(rows), len(ms), ip))
    n = t["nranks"]
    es = ELEM[t["dtype"]]
    for got, text, m in zip(rows, texts, ms):
        nrows += 1
        want = ds_row(m)
        wf = split_row(want)
        for name, g, w in zip(FIELDS, got, wf):
            if g != w:
                bad.append("%s %s %d B: %s %r, DeepSpeed prints %r" %
                           (op, t["dtype"], m["size_bytes"], name, g, w))
        if text != want:
            bad.append("%s %s: row %r is not %r" % (op, t["dtype"], text, want))
        # DeepSpeed's size is the rank's input tensor: for the gathers
        # 1/n of nccl-tests' (gathered) size, else all of it
        s = m["ds_size_bytes"]
        s_in = m["size_bytes"] // n if t["op"] in ("all_gather", "gather") else m["size_bytes"]
        if s != s_in or m["ds_description"] != "%dx%d" % (s // es, es):
            bad.append("%s %s: size %d %s, want the input tensor %d B as %dx%d" %
                       (op, t["dtype"], s, m["ds_description"], s_in, s_in // es, es))
        # get_bw's factors (broadcast's and pt2pt's for the ops it lacks)
        d = m["time_us"] * 1e-6
        f = {"all_reduce": (2, 2 * (n - 1) / n), "all_gather": (n, n - 1),
             "gather": (n, n - 1), "all_to_all": (1, (n - 1) / n),
             "reduce_scatter": (1, (n - 1) / n), "scatter": (1, (n - 1) / n)
             }.get(t["op"], (1, 1))
        for k, name in ((0, "ds_throughput_gbps"), (1, "ds_busbw_gbps")):
            v = s / d * f[k] * 8 / 1e9
            if abs(m[name] - v) > 1e-9 * max(1.0, v):
                bad.append("%s: %s %g, get_bw gives %g" % (op, name, m[name], v))
        if raw:
            if not re.match(r"^[0-9]+$", got[0]) or int(got[0]) != s:
                bad.append("raw size %r is not %d" % (got[0], s))
            if not re.match(r"^[0-9]+\.[0-9]{3}$", got[2]) or \
                    abs(float(got[2]) - m["time_us"]) > 0.0005:
                bad.append("raw duration %r is not %g us" % (got[2], m["time_us"]))
        elif not re.match(r"^[0-9]+\.[0-9]{1,2} (B|KB|MB)$", got[0]) or \
                not re.match(r"^[0-9]+\.[0-9]{3} (us|ms)$", got[2]):
            bad.append("unit-less field in %r" % text)

# shakedown's labels stay, as comments before each block
labels = re.findall(r"^# Test (\d+): (\w+) (\w+)", open(out_file).read(), re.M)
if [(int(a), b, c) for a, b, c in labels] != [(t["test_index"] + 1, t["op"], t["dtype"]) for t in tests]:
    bad.append("the '# Test N: op dtype' comments do not follow the tests")
if nrows != want_rows:
    bad.append("%d rows, not %d" % (nrows, want_rows))
if len(ops) != 10:
    bad.append("%d ops, not 10" % len(ops))
print(nrows, "; ".join(bad[:5]) or "ok")
PY

check=$(python3 "$TMPD/read.py" "$TMPD/default.txt" "$TMPD/r.db" default $ROWS 2>&1)
is "$check" "$ROWS ok" "$ROWS rows, titles, headers and rules as DeepSpeed prints them for the recorded values"
check=$(python3 "$TMPD/read.py" "$TMPD/raw.txt" "$TMPD/raw.db" raw $ROWS 2>&1)
is "$check" "$ROWS ok" "--raw: $ROWS rows with bare bytes and microseconds, as DeepSpeed's --raw"

# the reader fails on what is not DeepSpeed's: a unit in a raw table, a
# row lost
check=$(python3 "$TMPD/read.py" "$TMPD/default.txt" "$TMPD/r.db" raw $ROWS 2>&1)
isnt "$check" "$ROWS ok" "the reader tells the default table from the raw one"
awk '/^1\.0 KB / && !gone { gone = 1; next } 1' "$TMPD/default.txt" >"$TMPD/less.txt"
check=$(python3 "$TMPD/read.py" "$TMPD/less.txt" "$TMPD/r.db" default $ROWS 2>&1)
isnt "$check" "$ROWS ok" "the reader counts the rows (one taken out)"

# --raw belongs to the DeepSpeed table
for f in "" "--format table" "--format json"; do
	run -t 30 $SHAKEDOWN run --db none --local 2 --op all_reduce $f --raw
	is "$rc" 2 "--raw ${f:-alone}: exit 2"
	like "$err" "^shakedown run: --raw is for --format deepspeed, which is not given; add --format deepspeed or drop it$" \
		"--raw ${f:-alone}: says what it is for"
done
done_testing
