#!/bin/sh
# views_agree.t - one verdict, told the same by every view.  A run with two
# tests (a split:2 all_reduce and a world all_gather) and a planted slow
# rank in block 0-1 that fails its peers expectation after a retry; then
# its summary, `report` (text and JSON), the HTML page, `runs` and the
# database are read and must agree number for number: the tests' numbers,
# attempts and members, each measured group's outcome, the counts, the
# exit status, and the failed subject.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
command -v python3 >/dev/null || skip_all "python3 missing"
DB="$TMPD/v.db"
cat >"$TMPD/plan.yaml" <<'PLAN'
name: agree
defaults: {min_bytes: 1K, max_bytes: 16K, iters: 5, warmup: 1,
           expect: {peers: 0.8}, retries: 1}
tests:
  - {op: all_reduce, scope: "split:2"}
  - {op: all_gather}
PLAN
SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=20000 run -t 120 "$SHAKEDOWN" run \
	--local 4 --plan "$TMPD/plan.yaml" --db "$DB" --no-progress
is "$rc" 6 "a slow rank in block 0-1: exit 6"
printf '%s\n' "$out" >"$TMPD/run.out"
"$SHAKEDOWN" report --db "$DB" >"$TMPD/report.txt"
"$SHAKEDOWN" report --db "$DB" --format json >"$TMPD/report.json"
"$SHAKEDOWN" report --db "$DB" --format html -o "$TMPD/report.html"
"$SHAKEDOWN" runs --db "$DB" --format csv >"$TMPD/runs.csv"
is "$?" 0 "every view rendered"

cat >"$TMPD/views.py" <<'PY'
import csv, html, json, re, sqlite3, sys
d = sys.argv[1]
run = open(d + "/run.out").read()
rep = open(d + "/report.txt").read()
js = json.load(open(d + "/report.json"))
page = open(d + "/report.html").read()
runs = list(csv.DictReader(open(d + "/runs.csv")))
db = sqlite3.connect(d + "/v.db")
say = []

# the tests: number, attempt, members and outcome, in order
# the summary's rows, each with its subject and outcome whole (a long one
# goes on in its column on the lines below)
rows = []
for line in run[run.find("# Summary of run"):].split("\n")[3:]:
    m = re.match(r"^# +(\d+) (.{28}) (.{15})", line)
    if m:
        rows.append([m.group(1), m.group(2).strip(), m.group(3).strip()])
    elif re.match(r"^#      \S", line) and rows:
        rows[-1][1] += " " + line[7:35].strip()
        rows[-1][2] = (rows[-1][2] + " " + line[36:].strip()).strip()
sumtext = "".join("# %s %s %s \n" % tuple(r) for r in rows)
summary = []
for m in re.finditer(r"^# +(\d+) (\S+) .*? ranks (\S+) +(retried|passed on retry|passed|failed|skipped|not judged)(?: \((\d+) attempts\))? ", sumtext, re.M):
    summary.append((int(m.group(1)), m.group(3), m.group(4)))
for m in re.finditer(r"^# +(\d+) all_gather float32 +(passed|failed|skipped)", sumtext, re.M):
    summary.append((int(m.group(1)), "0-3", m.group(2)))
headers = [(int(m.group(1)), int(m.group(2) or 1), m.group(3))
           for m in re.finditer(r"^# Test (\d+)(?: \(attempt (\d+)\))?: \S+ \S+(?: sum split:2 ranks ([^,\s]+))?", run, re.M)]
textrep = [(int(a), int(b), c if c != "-" else "", o)
           for a, b, c, o in re.findall(r"^(\d+) +(\d+) +\S+ +float32 +\S+ +\S+ +\S+ +(\S+) +\d+ +\d+ +\S+ +\d+ +(retried|passed on retry|passed|failed|skipped|not judged)", rep, re.M)]
jsr = [(t["test"], t["attempt"], t["members"], t["outcome"]) for t in js["tests"]]
dbr = list(db.execute("SELECT number, attempt, members, outcome FROM tests_v ORDER BY test_index"))
pager = [(int(a), int(b or 1), c) for a, b, c in re.findall(r"<h3>test (\d+)(?: \(attempt (\d+)\))?: [^<]*?ranks ([0-9,-]+)", page)]
say.append("db %r" % dbr)
if [tuple(x) for x in dbr] != jsr: say.append("JSON %r" % jsr)
if [tuple(x) for x in dbr] != textrep: say.append("report %r" % textrep)
if [(a, b, c) for a, b, c, _ in dbr] != pager: say.append("html %r" % pager)
if [(a, b, c if a == 1 else "0-3") for a, b, c, _ in dbr] != [(a, b, c or "0-3") for a, b, c in headers]:
    say.append("headers %r" % headers)
order = {(1, "0-1", 1): 0}
sumrows = sorted(summary, key=lambda x: x[0])
dbrows = sorted([(a, c, o) for a, b, c, o in dbr], key=lambda x: x[0])
if sorted(sumrows) != sorted(dbrows): say.append("summary %r" % summary)

# the counts
m = re.search(r"^# (\d+) subjects?: (\d+) passed, (\d+) failed \((\d+) attempts? retried\); run failed \(exit status (\d+)\)", run.replace("\n#   ", " "), re.M)
counts = tuple(int(x) for x in m.groups()) if m else None
total = sum(1 for x in dbr if x[3] != "retried")
passed = sum(1 for x in dbr if x[3] in ("passed", "passed on retry", "not judged"))
failed = sum(1 for x in dbr if x[3] == "failed")
retried = sum(1 for x in dbr if x[3] == "retried")
want = (total, passed, failed, retried, 6)
if counts != want: say.append("summary counts %r, want %r" % (counts, want))
m = re.search(r"^subjects +(\d+): (\d+) passed, (\d+) not passed", rep, re.M)
if not m or (int(m.group(1)), int(m.group(2)), int(m.group(3))) != (total, passed, total - passed):
    say.append("report counts %r" % (m and m.groups(),))
v = js["verdict"]
if (v["tests_total"], v["tests_passed"], v["tests_failed"], v["exit_status"]) != (total, passed, total - passed, 6):
    say.append("JSON counts %r" % v)
m = re.search(r"FAILED: (\d+) of (\d+) subjects passed", page)
if not m or (int(m.group(1)), int(m.group(2))) != (passed, total):
    say.append("HTML counts %r" % (m and m.groups(),))
r = runs[0]
if (int(r["tests_passed"]), int(r["tests"]), int(r["exit"])) != (passed, total, 6):
    say.append("runs %r" % r)
# the failed subject: the same group everywhere, after its attempts
fails = [(t["test"], t["members"]) for t in js["tests"] if t["outcome"] == "failed"]
if fails != [(1, "0-1")]: say.append("failed %r" % fails)
if "# FAILED group ranks 0-1: peers" not in run: say.append("no FAILED line")
if not re.search(r"^1 +group +ranks 0-1 +peers .* 2 +busbw", rep, re.M):
    say.append("report's failed expectation")
# the bars' ratio is the FAILED line's: the median of the others
m = re.search(r"# FAILED group ranks 0-1: peers: busbw \S+ GB/s at \S+ is ([0-9.]+) x the median", run)
b = re.search(r"<tr><td>ranks 0-1</td><td>[^<]*</td><td class=\"n\">[^<]*</td><td class=\"n\">([0-9.]+)</td><td class=\"fail\">FAILED", page)
if not m or not b or m.group(1) != b.group(1):
    say.append("ratios: FAILED %r, bars %r" % (m and m.group(1), b and b.group(1)))
# the evidence first: the suspects and failed expectations before the
# tests in report's text, the evidence before the plots in the HTML
if not (0 <= rep.find("failed expectations") < rep.find("test  attempt")):
    say.append("report's order")
if not (0 <= page.find('id="verdict"') < page.find('id="failures"') < page.find('id="identity"') < page.find('id="operations"')):
    say.append("the page's order")
print("agree" if len(say) == 1 else "; ".join(say))
PY
is "$(python3 "$TMPD/views.py" "$TMPD")" agree \
	"the summary, report, its JSON and HTML, runs and the database agree"

# the numbers, said plainly: test 1's block 0-1 failed after 2 attempts
# (in 80 columns the subject goes on below, in its column)
sum_rows=$(sed -n '/^# Summary of run/,$p' "$TMPD/run.out" | tr '\n' '|')
like "$sum_rows" "\|#    1 all_reduce float32 sum +retried [^|]*\|#      split:2 ranks 0-1\|" \
	"the first attempt of the slow block is retried"
like "$sum_rows" "\|#    1 all_reduce float32 sum +failed [^|]*\|#      split:2 ranks 0-1 +\\(2 attempts\\)\|" \
	"its last attempt failed, after 2 attempts"
like "$(sed -n '/^# 3 subjects/,/^# results/p' "$TMPD/run.out" | sed 's/^#   //' | tr '\n' ' ')" "^# 3 subjects: 2 passed, 1 failed \\(1 attempt retried\\); run failed \\(exit status 6\\): 1 subject failed its expectations" \
	"the last line counts the subjects and gives the rule"
like "$(cat "$TMPD/run.out")" "^# Test 1 \\(attempt 2\\): all_reduce float32 sum split:2 ranks 0-1" \
	"the retry is an attempt of test 1"
done_testing
