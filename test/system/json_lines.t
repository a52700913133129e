#!/bin/sh
# json_lines.t - `run --format json`: one object per measurement, every
# collective and every type Gloo has, both placements, each line compared
# key by key with what the database recorded for it (shakedown(1), OUTPUT:
# the keys and their meaning; redop null for data movement, root null for
# an op without one, wrong null when the data was not checked).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v python3 >/dev/null || skip_all "python3 is needed to read JSON"

OPS=all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,gather,scatter,sendrecv,pt2pt
TYPES=float32,float16,float64,int8,uint8,int32,int64

# the reader: LINES DB [unchecked]; prints "N lines ok" or what differs
cat >"$TMPD/reader.py" <<'PY'
import json, sqlite3, sys
lines = [l for l in open(sys.argv[1]).read().split("\n") if l]
unchecked = len(sys.argv) > 3
db = sqlite3.connect(sys.argv[2])
db.row_factory = sqlite3.Row
rows = {}
# a line names its test by the one number every view gives it (tests.
# plan_test) and its attempt; with the group's members, one row
for r in db.execute("""SELECT t.plan_test, t.attempt, t.op, t.dtype, t.redop,
        t.root, t.scope, t.members, t.nranks, r.uuid, m.* FROM measurements m
        JOIN tests t ON t.id = m.test_id JOIN runs r ON r.id = t.run_id"""):
    rows[(r["plan_test"], r["attempt"], r["members"], r["size_bytes"],
          r["in_place"])] = r
keys = ["run", "test", "attempt", "op", "dtype", "redop", "root", "scope", "members",
        "nranks", "algo", "size_bytes", "count", "in_place", "iters",
        "warmup_iters", "time_us", "time_us_min", "time_us_avg",
        "time_us_max", "algbw_gbs", "busbw_gbs", "ds_size_bytes",
        "ds_description", "ds_duration_us", "ds_throughput_gbps",
        "ds_busbw_gbps", "checked", "wrong"]
bad, seen = [], set()
def near(a, b, decimals):
    return abs(a - b) <= 0.5 * 10 ** -decimals + 1e-9 * abs(b)
for l in lines:
    d = json.loads(l)
    if list(d)[:len(keys)] != keys:
        bad.append("keys %r" % list(d))
        continue
    k = (d["test"], d["attempt"], d["members"], d["size_bytes"],
         1 if d["in_place"] else 0)
    r = rows.get(k)
    if r is None:
        bad.append("no database row for %r" % (k,))
        continue
    seen.add(k)
    want = {"run": r["uuid"], "op": r["op"], "dtype": r["dtype"],
            "redop": r["redop"], "root": r["root"], "scope": r["scope"],
            "members": r["members"], "nranks": r["nranks"],
            "algo": r["algo"], "count": r["count"], "iters": r["iters"],
            "warmup_iters": r["warmup_iters"],
            "ds_size_bytes": r["ds_size_bytes"],
            "ds_description": r["ds_description"],
            "checked": bool(r["checked"]),
            "wrong": r["wrong"] if r["checked"] else None}
    for key, v in want.items():
        if d[key] != v:
            bad.append("test %d %s: %s is %r, the database %r" %
                       (k[0], d["op"], key, d[key], v))
    # printed with %.3f (times) and %.6f (bandwidths)
    for key, col, dec in (("time_us", "time_us", 3),
                          ("time_us_min", "time_us_min", 3),
                          ("time_us_avg", "time_us_avg", 3),
                          ("time_us_max", "time_us_max", 3),
                          ("ds_duration_us", "time_us", 3),
                          ("algbw_gbs", "algbw_gbs", 6),
                          ("busbw_gbs", "busbw_gbs", 6),
                          ("ds_throughput_gbps", "ds_throughput_gbps", 6),
                          ("ds_busbw_gbps", "ds_busbw_gbps", 6)):
        if not near(d[key], r[col], dec):
            bad.append("test %d %s: %s is %r, the database %r" %
                       (k[0], d["op"], key, d[key], r[col]))
    if (d["redop"] is None) != (d["op"] not in ("all_reduce", "reduce_scatter", "reduce")):
        bad.append("%s: redop %r" % (d["op"], d["redop"]))
    if (d["root"] is None) != (d["op"] not in ("broadcast", "reduce", "gather", "scatter")):
        bad.append("%s: root %r" % (d["op"], d["root"]))
    if unchecked != (d["wrong"] is None):
        bad.append("%s: wrong %r with checked %r" % (d["op"], d["wrong"], d["checked"]))
missing = set(rows) - seen
if missing:
    bad.append("%d database rows without a line, e.g. %r" % (len(missing), sorted(missing)[0]))
print(len(lines), "lines", "; ".join(sorted(set(bad))[:4]) or "ok")
PY

run -t 180 $SHAKEDOWN run --no-progress --db "$TMPD/r.db" --local 3 --format json \
	--op "$OPS" -d "$TYPES" -b 1K -e 16K -f 4 -n 2 -w 1
is "$rc" 0 "every collective in every Gloo type on 3 ranks, as JSON lines: exit 0"
printf '%s\n' "$out" >"$TMPD/lines.json"
# 10 ops x 7 types x 3 sizes x 2 placements
is "$(python3 "$TMPD/reader.py" "$TMPD/lines.json" "$TMPD/r.db")" "420 lines ok" \
	"420 lines, each with every key, equal to the database's row"
like "$err" "# 70 subjects: 70 passed;" "the summary goes to standard error"

# unchecked (-c 0): wrong is null, not 0
run -t 60 $SHAKEDOWN run --no-progress --db "$TMPD/c0.db" --local 2 --format json \
	--op all_reduce,broadcast,gather -r 1 -c 0 -b 1K -e 4K -f 4 -n 1 -w 0
is "$rc" 0 "-c 0: exit 0"
printf '%s\n' "$out" >"$TMPD/c0.json"
is "$(python3 "$TMPD/reader.py" "$TMPD/c0.json" "$TMPD/c0.db" unchecked)" "12 lines ok" \
	"-c 0: 12 lines, wrong null on each, root 1 where the op has one"
done_testing
