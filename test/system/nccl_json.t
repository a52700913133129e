#!/bin/sh
# nccl_json.t - `run -J FILE` writes the JSON document of nccl-tests 2.19's
# -J, read here the way its readers read it.  The schema is nccl-tests' own,
# from ../shared/anchors/nccl-tests (src/util.cu, JSON_FILE_VERSION 3):
#   jsonOutputInit              version, start_time, args, env, nccl_version
#   writeDeviceReport           config {nthreads ... parallel_init, devices
#                               [{rank, group, pid, hostname, device,
#                               device_hex, device_info}]}
#   writeResultHeader           results [
#   writeBenchmarkLinePreamble  {size, count, type, redop, root ("%6i")
#   writeBenchmarkLineBody      out_of_place, in_place {time, alg_bw, bus_bw,
#                               nwrong (null unchecked)}
#   writeBenchmarkLineTerminator actual_iterations, experiment_name}
#   writeResultFooter           out_of_bounds {count, okay},
#                               average_bus_bandwidth {bandwidth, okay}
#   writeErrors, jsonOutputFinalize  errors [], end_time
#   jsonDouble "%lf", jsonBool "true"/"false" strings
# and tools/analyze_perf_json.py, when ../shared has it, reads the file.
# Every value is checked against the database's measurements (both
# placements; an in-place not measured is null); bad paths are refused
# before the run starts; a failed write is said and never called written.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

# The reader: JSON DB WANT_CONFIG, where WANT_CONFIG is a JSON object of
# config values to expect.  Prints "R results of T tests; ok", or what is
# wrong.
cat >"$TMPD/reader.py" <<'PY'
import json, re, sqlite3, sys

path, dbpath, want_config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
doc = json.load(open(path))
bad = []

def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)

def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)

def keys(obj, want, what):
    if not isinstance(obj, dict) or list(obj) != want:
        bad.append("%s: keys %r, not %r" % (what, list(obj) if
                   isinstance(obj, dict) else obj, want))
        return False
    return True

def f6(v):  # the "%lf" of a number, as jsonDouble writes it
    return "%f" % v

keys(doc, ["version", "start_time", "args", "env", "nccl_version", "config",
           "results", "out_of_bounds", "average_bus_bandwidth", "errors",
           "end_time"], "document")
if doc.get("version") != 3 or not is_int(doc.get("version")):
    bad.append("version %r, not 3" % doc.get("version"))
stamp = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
for k in ("start_time", "end_time"):
    if not isinstance(doc.get(k), str) or not stamp.match(doc[k]):
        bad.append("%s %r is not %%Y-%%m-%%d %%H:%%M:%%S" % (k, doc.get(k)))
args = doc.get("args")
env = doc.get("env")
if not isinstance(env, list) or not all(isinstance(e, str) and "=" in e
                                        for e in env):
    bad.append("env is not a list of NAME=value strings")
else:
    names = [e.split("=", 1)[0] for e in env]
    if "NCCL_JSON_T_MARK=1" not in env:
        bad.append("env lacks NCCL_JSON_T_MARK=1: %r" % env)
    if [n for n in names if "TOKEN" in n]:
        bad.append("env has a TOKEN variable: %r" % names)
    if [n for n in names if not re.match(
            r"^(NCCL_|SHAKEDOWN_|GLOO_|CUDA_VISIBLE_DEVICES$)", n)]:
        bad.append("env has other variables: %r" % names)
if doc.get("nccl_version") != 0 or not is_int(doc.get("nccl_version")):
    bad.append("nccl_version %r, not 0 (Gloo)" % doc.get("nccl_version"))

db = sqlite3.connect(dbpath)
db.row_factory = sqlite3.Row
run = db.execute("SELECT * FROM runs").fetchall()
if len(run) != 1:
    bad.append("%d runs in the database, not 1" % len(run))
run = run[0]
ranks = db.execute("SELECT * FROM ranks WHERE run_id = ? ORDER BY rank",
                   (run["id"],)).fetchall()
# the recorded command line, argument by argument (no argument here has a
# space, so no quotes)
if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
    bad.append("args is not a list of strings")
elif args[:2] != ["shakedown", "run"] or \
        " ".join(args) != run["command_line"]:
    bad.append("args %r are not the command line" % args[:6])

cfg = doc.get("config", {})
step = "step_factor" if "step_factor" in cfg else "step_bytes"
keys(cfg, ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes", step,
           "warmup_iters", "iterations", "aggregated_iterations",
           "validation", "graph", "blocking_collectives", "per_iter_timing",
           "per_iter_skip", "parallel_init", "devices"], "config")
want = {"nthreads": 1, "ngpus": 1, "aggregated_iterations": 1, "graph": 0,
        "blocking_collectives": "false", "per_iter_timing": "false",
        "per_iter_skip": 0, "parallel_init": "false"}
want.update(want_config)
for k, v in want.items():
    if cfg.get(k) != v or type(cfg.get(k)) is not type(v):
        bad.append("config %s %r, not %r" % (k, cfg.get(k), v))
devs = cfg.get("devices", [])
if len(devs) != len(ranks) or not ranks:
    bad.append("%d devices for %d ranks" % (len(devs), len(ranks)))
for d, r in zip(devs, ranks):
    if not keys(d, ["rank", "group", "pid", "hostname", "device",
                    "device_hex", "device_info"], "device %d" % r["rank"]):
        continue
    got = (d["rank"], d["group"], d["pid"], d["hostname"], d["device"],
           d["device_hex"], d["device_info"])
    exp = (r["rank"], 0, r["pid"], r["host"], r["local_rank"], "-",
           r["device_name"])
    if got != exp or not all(is_int(x) for x in got[:3] + got[4:5]):
        bad.append("device %r, not %r" % (got, exp))

# the rows the database holds, in run order: a size's out-of-place
# measurement, then its in-place one when there is one
nccl_type = {"float32": "float", "float16": "half", "float64": "double",
             "int8": "int8", "int32": "int32", "int64": "int64",
             "uint8": "uint8"}
tests = db.execute("SELECT * FROM tests WHERE run_id = ? ORDER BY test_index",
                   (run["id"],)).fetchall()
expected, allm = [], []
for t in tests:
    rows = {}
    for m in db.execute("SELECT * FROM measurements WHERE test_id = ? "
                        "ORDER BY id", (t["id"],)):
        allm.append(m)
        rows.setdefault(m["size_bytes"], {})[m["in_place"]] = m
    for size, pl in rows.items():
        expected.append((t, pl.get(0), pl.get(1)))

def placement(got, m, what):
    if m is None:
        if got is not None:
            bad.append("%s: %r where nothing was measured" % (what, got))
        return
    if not keys(got, ["time", "alg_bw", "bus_bw", "nwrong"], what):
        return
    for k, col in (("time", "time_us"), ("alg_bw", "algbw_gbs"),
                   ("bus_bw", "busbw_gbs")):
        if not is_num(got[k]) or f6(got[k]) != f6(m[col]):
            bad.append("%s %s %r, database %r" % (what, k, got[k], m[col]))
    want = f6(float(m["wrong"])) if m["checked"] else None
    have = got["nwrong"] if got["nwrong"] is None else f6(got["nwrong"])
    if have != want:
        bad.append("%s nwrong %r, database %r" % (what, have, want))

results = doc.get("results", [])
if len(results) != len(expected):
    bad.append("%d results for the database's %d sizes" % (len(results),
                                                           len(expected)))
for i, (r, (t, oop, ip)) in enumerate(zip(results, expected)):
    what = "result %d (%s %s)" % (i, t["name"], t["dtype"])
    if not keys(r, ["size", "count", "type", "redop", "root", "out_of_place",
                    "in_place", "actual_iterations", "experiment_name"],
                what):
        continue
    m = oop if oop is not None else ip
    name = t["name"]
    if t["scope"] != "world":
        name += " %s ranks %s" % (t["scope"], t["members"])
    exp = (m["size_bytes"], m["count"], nccl_type[t["dtype"]],
           t["redop"] or "none",
           "%6i" % (t["root"] if t["root"] is not None else -1),
           m["iters"], name)
    got = (r["size"], r["count"], r["type"], r["redop"], r["root"],
           r["actual_iterations"], r["experiment_name"])
    if got != exp or not all(is_int(x) for x in got[:2] + got[5:6]):
        bad.append("%s: %r, not %r" % (what, got, exp))
    placement(r["out_of_place"], oop, what + " out_of_place")
    placement(r["in_place"], ip, what + " in_place")

nwrong = sum(1 for m in allm if m["checked"] and m["wrong"])
keys(doc.get("out_of_bounds"), ["count", "okay"], "out_of_bounds")
if doc.get("out_of_bounds") != {"count": nwrong,
                                "okay": "false" if nwrong else "true"}:
    bad.append("out_of_bounds %r, %d wrong" % (doc.get("out_of_bounds"),
                                               nwrong))
avg = doc.get("average_bus_bandwidth", {})
keys(avg, ["bandwidth", "okay"], "average_bus_bandwidth")
mean = sum(m["busbw_gbs"] for m in allm) / len(allm) if allm else 0
if not is_num(avg.get("bandwidth")) or \
        abs(avg["bandwidth"] - mean) > 1e-6 or avg.get("okay") != "unchecked":
    bad.append("average_bus_bandwidth %r, mean %f" % (avg, mean))
errs = [] if run["status"] == "passed" else [run["message"] or run["status"]]
if doc.get("errors") != errs:
    bad.append("errors %r, not %r" % (doc.get("errors"), errs))
print("%d results of %d tests; %s" % (len(results), len(tests),
                                      "; ".join(bad[:4]) or "ok"))
PY
read_json() { python3 "$TMPD/reader.py" "$@" 2>&1 | tail -n 3; }

# every collective, three types, both placements, on 3 ranks
OPS=all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,gather,scatter,sendrecv,pt2pt
J=$TMPD/out.json
NCCL_JSON_T_MARK=1 SHAKEDOWN_JSON_T_TOKEN=s3cret run -t 180 $SHAKEDOWN run \
	--no-progress --local 3 --db "$TMPD/r.db" -J "$J" --op "$OPS" \
	-d float32,float16,int8 -b 1K -e 64K -f 8 -n 2 -w 1
is "$rc" 0 "every collective in three types on 3 ranks with -J: exit 0"
like "$out" "^# nccl-tests JSON written to $J$" "it says where the document is"
ok '[ -f "$J" ] && [ ! -e "$J.tmp" ]' "the document is there, its .tmp gone"
is "$(read_json "$J" "$TMPD/r.db" '{"minimum_bytes": 1024,
	"maximum_bytes": 65536, "step_factor": 8, "warmup_iters": 1,
	"iterations": 2, "validation": 1}')" \
	"90 results of 30 tests; ok" \
	"nccl-tests' schema, every row the database's (10 ops x 3 types x 3 sizes)"
unlike "$(cat "$J")" "s3cret" "no TOKEN variable reaches the document"
is "$(tail -c 1 "$J" | od -An -c | tr -d ' ')" '\n' "one line, ending in a newline"

# nccl-tests' own reader, where ../shared has it (CI machines do not)
AN=
for d in "$top_srcdir/../shared" /work/shared; do
	f=$d/anchors/nccl-tests/tools/analyze_perf_json.py
	[ -f "$f" ] && { AN=$f; break; }
done
if [ -n "$AN" ]; then
	run -t 60 python3 "$AN" "$J" --all
	is "$rc" 0 "analyze_perf_json.py --all reads it"
	like "$out" "Results: +90" "and finds its 90 results"
	run -t 60 python3 "$AN" "$J" --in-place --spikes
	is "$rc" 0 "analyze_perf_json.py --in-place reads it (null in-place rows)"
else
	skip 3 "no nccl-tests' tools/analyze_perf_json.py (../shared/anchors)"
fi

# split groups, no in-place, no check, step bytes, JSON lines on stdout;
# an existing file is replaced
J2=$TMPD/split.json
echo old >"$J2"
NCCL_JSON_T_MARK=1 run -t 120 $SHAKEDOWN run --no-progress --local 4 \
	--db "$TMPD/s.db" --output-file "$J2" --op all_reduce,broadcast \
	--scope split:2 --no-in-place -c 0 -b 1K -e 3K -i 1K -n 1 -w 0 \
	--format json
is "$rc" 0 "split:2, --no-in-place, -c 0, -i, --format json with --output-file: exit 0"
is "$(read_json "$J2" "$TMPD/s.db" '{"minimum_bytes": 1024,
	"maximum_bytes": 3072, "step_bytes": 1024, "validation": 0,
	"iterations": 1, "warmup_iters": 0}')" "12 results of 4 tests; ok" \
	"split groups' rows name their group; in_place and nwrong are null"
like "$err" "^# nccl-tests JSON written to $J2$" \
	"with --format json it says so on stderr"
unlike "$out" "nccl-tests JSON" "and stdout holds JSON lines only"

# wrong data: out_of_bounds counts it, errors says why; nccl-tests' spelling
J3=$TMPD/wrong.json
NCCL_JSON_T_MARK=1 SHAKEDOWN_FAULT=rank=1,kind=corrupt,size=4K,index=3 \
	run -t 120 $SHAKEDOWN run --no-progress --local 2 --db "$TMPD/w.db" \
	--output_file "$J3" --op all_reduce -b 1K -e 4K -n 1 -w 0
is "$rc" 1 "a corrupted element: exit 1"
is "$(read_json "$J3" "$TMPD/w.db" '{"validation": 1}')" \
	"2 results of 1 tests; ok" "the document counts the wrong data"
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["out_of_bounds"]["okay"], len(d["errors"]))' "$J3")" "false 1" \
	"out_of_bounds is not okay and errors has the run's message"

# a rank that stalls: the run is stopped by the control plane, from its
# thread, and the document is still finished and said
J4=$TMPD/stall.json
NCCL_JSON_T_MARK=1 SHAKEDOWN_FAULT=rank=1,kind=stall,size=4K \
	run -t 120 $SHAKEDOWN run --no-progress --local 2 --db "$TMPD/t.db" \
	-J "$J4" --op all_reduce -b 1K -e 16K -n 1 -w 0 -T 3
is "$rc" 4 "a stalled rank: exit 4"
like "$out" "^# nccl-tests JSON written to $J4$" "the stopped run's document is said written"
like "$(read_json "$J4" "$TMPD/t.db" '{}')" "^[0-9]+ results of 1 tests; ok$" \
	"and holds what was measured, with the run's message in errors"

# a write that fails (RLIMIT_FSIZE: the document's first bytes) is said,
# and the document is not called written nor left half
J5=$TMPD/big.json
run -t 60 sh -c 'trap "" XFSZ; ulimit -f 1; exec "$@" >/dev/null' sh \
	$SHAKEDOWN run --no-progress --local 2 --db none -J "$J5" \
	--op all_reduce -e 4K -n 1 -w 0
is "$rc" 0 "a document that cannot be written does not fail the run"
like "$err" "shakedown: warning: -J $J5 was not written: writing $J5.tmp: File too large" \
	"it says the document was not written, and why"
unlike "$err" "JSON written" "and never that it was"
ok '[ ! -e "$J5" ] && [ ! -e "$J5.tmp" ]' "no file is left, whole or half"

# bad paths: refused before the run starts (no row, no database), exit 2
bad_path() { # PATH REGEX NAME
	run -t 60 $SHAKEDOWN run --no-progress --local 2 --db "$TMPD/bad.db" \
		-J "$1" --op all_reduce -e 4K
	is "$rc" 2 "$3: exit 2"
	like "$err" "$2" "$3: says the path and what to do"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$3: in one line"
	is "$out" "" "$3: before any test (no output)"
	ok '[ ! -e "$TMPD/bad.db" ]' "$3: nothing recorded"
}
bad_path /nonexistent/dir/x.json \
	"^shakedown run: -J /nonexistent/dir/x.json: directory /nonexistent/dir does not exist; create it \\(mkdir -p /nonexistent/dir\\) or give a path in an existing directory$" \
	"-J in a missing directory"
bad_path "$TMPD" \
	"^shakedown run: -J $TMPD: is a directory; give a file name in it, such as -J $TMPD/results.json$" \
	"-J to a directory"
: >"$TMPD/afile"
bad_path "$TMPD/afile/x.json" \
	"^shakedown run: -J $TMPD/afile/x.json: $TMPD/afile is not a directory; give a path in an existing directory$" \
	"-J under a file"
if [ "$(id -u)" != 0 ]; then
	mkdir "$TMPD/ro" && chmod 555 "$TMPD/ro"
	bad_path "$TMPD/ro/x.json" \
		"^shakedown run: -J $TMPD/ro/x.json: cannot create a file in $TMPD/ro \\(Permission denied\\); give a path in a directory you can write to$" \
		"-J in a directory without write permission"
	chmod 755 "$TMPD/ro"
else
	skip 5 "running as root, which may write in any directory"
fi
done_testing
