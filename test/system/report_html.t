#!/bin/sh
# report_html.t - `shakedown report --format html` opened in a real
# headless Chromium: a healthy run and one with wrong data planted
# (SHAKEDOWN_FAULT kind=corrupt) on two real Gloo ranks, each page
# screenshotted and its DOM dumped; each plot is in the rendered DOM, the
# verdict says passed or failed with the bad node, each plot has as many
# points per placement as the test measured sizes (sqlite3 counts), and
# Chromium's net log shows no request.  The network check is shown to fail
# on a page that fetches an image from a test server on 127.0.0.1.  Also:
# a string from the database is escaped, -o writes through FILE.tmp and a
# failure names the file, the option errors, and `upload --html` sends the
# page beside the JSON to a real collector on 127.0.0.1.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/upload_lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"
command -v python3 >/dev/null || skip_all "python3 is needed to read the DOM and net log"
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip_all "chromium is not installed (apt-get install chromium; quickstart.sh does)"

tmp=$TMPD/up
mkdir -p "$tmp/out"
at_exit upload_cleanup
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
CHECK="python3 $top_srcdir/test/system/report_html_check.py"
DB=$TMPD/r.db
q() { sqlite3 -batch "$DB" "$1"; }
S="$SHAKEDOWN run --no-progress --local 2 --op all_reduce,all_gather -b 4K -e 64K -n 3 -w 1 --db $DB"

# chrome NAME URL: screenshot and DOM of URL, each with its net log, in a
# profile of its own, offline (no name resolves, a proxy nobody listens
# on; only 127.0.0.1, where the planted fetch goes, is reachable), with
# the browser's own background traffic turned down (what is left of it is
# told apart in report_html_check.py)
chrome() {
	for mode in shot dom; do
		if [ $mode = shot ]; then
			extra="--screenshot=$TMPD/$1.png --window-size=1200,3000"
		else
			extra="--dump-dom"
		fi
		timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
			--user-data-dir="$TMPD/profile-$1-$mode" --no-first-run \
			--disable-background-networking --disable-component-update \
			--disable-sync --disable-default-apps --disable-extensions \
			--host-resolver-rules='MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' \
			--proxy-server=127.0.0.1:9 \
			--log-net-log="$TMPD/$1-$mode.netlog" $extra "$2" \
			> "$TMPD/$1.$mode.out" 2> "$TMPD/$1.$mode.err"
		crc=$?
		[ $crc = 0 ] || { diag "chromium exit $crc"; diag_file "$TMPD/$1.$mode.err"; }
	done
}

run -t 120 $S
is "$rc" 0 "a healthy run on 2 ranks"
OK=$(q "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
SHAKEDOWN_FAULT=rank=1,kind=corrupt,size=16K,index=5 run -t 120 $S
is "$rc" 1 "a run with wrong data planted: exit 1"
BAD=$(q "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")

run -t 60 "$SHAKEDOWN" report "$OK" --db "$DB" --format html -o "$TMPD/ok.html"
is "$rc" 0 "report --format html -o: exit 0"
ok '[ -s "$TMPD/ok.html" ] && [ ! -e "$TMPD/ok.html.tmp" ]' \
	"the file is written whole and no .tmp is left"
run -t 60 "$SHAKEDOWN" report "$BAD" --db "$DB" --format html -o "$TMPD/bad.html"
is "$rc" 0 "the failed run's report: exit 0"
size=$(wc -c < "$TMPD/bad.html")
ok '[ "$size" -lt 2000000 ]' "small enough to email ($size bytes)"

for name in ok bad; do
	uuid=$OK
	[ $name = bad ] && uuid=$BAD
	secs0=$(date +%s)
	chrome $name "file://$TMPD/$name.html"
	diag "$name: chromium took $(( $(date +%s) - secs0 )) s"
	ok '[ "$(od -An -N8 -tx1 "$TMPD/$name.png" | tr -d " ")" = 89504e470d0a1a0a ]' \
		"$name: the screenshot is a PNG"
	ok '[ "$(wc -c < "$TMPD/$name.png")" -gt 10000 ]' \
		"$name: the screenshot is not empty"
	$CHECK dom "$TMPD/$name.dom.out" > "$TMPD/$name.plots"
	# per test with measurements: "index sizes sizes sizes" from the db
	q "SELECT t.test_index || ' ' || count(DISTINCT m.size_bytes) || ' ' ||
		sum(m.in_place = 0) || ' ' || sum(m.in_place = 1)
		FROM tests t JOIN runs r ON r.id = t.run_id
		JOIN measurements m ON m.test_id = t.id WHERE r.uuid = '$uuid'
		GROUP BY t.id ORDER BY t.test_index" > "$TMPD/$name.want"
	ok '[ "$(wc -l < "$TMPD/$name.want")" = 2 ]' \
		"$name: the db has two tests with measurements"
	is "$(grep -v : "$TMPD/$name.plots")" "$(cat "$TMPD/$name.want")" \
		"$name: a plot per test in the rendered DOM, with one point per measured size and placement"
	is "$(awk '$1 == "scripts:" { print $2 }' "$TMPD/$name.plots")" 0 \
		"$name: no script in the page"
	for mode in shot dom; do
		$CHECK net "$TMPD/$name-$mode.netlog" > "$TMPD/$name-$mode.urls" 2>/dev/null
		is "$?" 0 "$name ($mode): the net log has no request"
		diag_file "$TMPD/$name-$mode.urls"
	done
done
like "$(grep '^verdict:' "$TMPD/ok.plots")" "^verdict: . PASSED: 2 of 2 subjects passed their checks; bad nodes: none$" \
	"the healthy run's verdict, rendered"
host=$(q "SELECT hosts FROM suspects s JOIN runs r ON r.id = s.run_id WHERE r.uuid = '$BAD' AND bad_node = 1")
like "$(grep '^verdict:' "$TMPD/bad.plots")" "^verdict: . FAILED: 1 of 2 subjects passed their checks; 1 wrong elements; bad nodes: $host 1 test had wrong data$" \
	"the failed run's verdict names the bad node, rendered"
like "$(cat "$TMPD/bad.dom.out")" "Wrong data in test 1 \\(all_reduce float32\\) at 16K out-of-place: 1 wrong element; the first at rank 1, index 5: expected" \
	"the wrong data in words"
like "$(cat "$TMPD/bad.dom.out")" "id=\"history\"" \
	"the history of the same op on the same nodes (2 runs)"

# -- the network check can fail: a page that fetches ---------------------
start_server img 200
sed -e 's|<meta http-equiv="Content-Security-Policy"[^>]*>||' \
	-e "s|</body>|<img src=\"http://127.0.0.1:$PORT/x.png\" alt=\"\"></body>|" \
	"$TMPD/bad.html" > "$TMPD/fetch.html"
chrome fetch "file://$TMPD/fetch.html"
$CHECK net "$TMPD/fetch-dom.netlog" > "$TMPD/fetch.urls" 2>/dev/null
is "$?" 1 "planted: a page fetching an image fails the network check"
like "$(cat "$TMPD/fetch.urls")" "^http://127\\.0\\.0\\.1:$PORT/x\\.png$" \
	"and names the URL"
ok '[ "$(requests "$LOG")" -ge 1 ]' "the test server saw the request"

# the page's own Content-Security-Policy stops such a fetch, too
sed -e "s|</body>|<img src=\"http://127.0.0.1:$PORT/y.png\" alt=\"\"></body>|" \
	"$TMPD/bad.html" > "$TMPD/csp.html"
: > "$LOG"
chrome csp "file://$TMPD/csp.html"
$CHECK net "$TMPD/csp-dom.netlog" > "$TMPD/csp.urls" 2>/dev/null
is "$?" 0 "with the report's Content-Security-Policy the same fetch is not made"
is "$(requests "$LOG")" 0 "and the test server sees nothing"

# -- a hang, in words --------------------------------------------------------
HDB=$TMPD/h.db
SHAKEDOWN_FAULT=rank=1,kind=stall,size=16K run -t 60 $SHAKEDOWN run --no-progress \
	--local 2 --op all_reduce -b 4K -e 64K -n 3 -w 1 -T 3 --db "$HDB"
is "$rc" 4 "a rank that hangs: exit 4"
run -t 60 "$SHAKEDOWN" report --db "$HDB" --format html -o "$TMPD/h.html"
like "$(cat "$TMPD/h.html")" '<li class="hang">Bad node [^:]*: rank 1 \([^)]*\) did not complete all_reduce float32 sum 16K' \
	"the hang is a failure, in words, naming the rank"

# -- strings from the database are escaped --------------------------------
cp "$DB" "$TMPD/evil.db"
sqlite3 "$TMPD/evil.db" "UPDATE runs SET message = '<script>alert(1)</script><b>x</b>' WHERE uuid = '$BAD'"
run -t 60 "$SHAKEDOWN" report "$BAD" --db "$TMPD/evil.db" --format html -o "$TMPD/evil.html"
like "$(cat "$TMPD/evil.html")" "&lt;script&gt;alert\\(1\\)&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" \
	"a message from the database is escaped"
unlike "$(cat "$TMPD/evil.html")" "<script" "no script element comes from it"

# -- the command's errors --------------------------------------------------
run -t 60 "$SHAKEDOWN" report --db "$DB" --format html -o "$TMPD/no/such/r.html"
is "$rc" 3 "-o into a missing folder: exit 3"
like "$err" "cannot write $TMPD/no/such/r.html.tmp: No such file or directory; check the folder exists and is writable" \
	"the message names the file and the fix"
run -t 60 "$SHAKEDOWN" report --db "$DB" -o "$TMPD/x.html"
is "$rc" 2 "-o without --format html: exit 2"
like "$err" "-o writes the HTML report; give --format html" "says what to give"
run -t 60 "$SHAKEDOWN" report --db "$DB" --format html --bad-nodes
is "$rc" 2 "--format html with --bad-nodes: exit 2"
run -t 60 "$SHAKEDOWN" report --db "$DB" --format html
is "$rc" 0 "--format html without -o: to standard output"
like "$out" "^<!DOCTYPE html>" "a page on standard output"

# -- per subject: a slow rank in one block of split:2 -----------------------
PLAN=$TMPD/v.yaml
cat >"$PLAN" <<'YAML'
name: v
defaults: {dtype: float32, min_bytes: 64K, max_bytes: 64K, iters: 5,
  warmup: 1, in_place: false, expect: {peers: 0.1}}
tests:
  - {op: sendrecv, scope: split:2}
YAML
VDB=$TMPD/v.db
SHAKEDOWN_FAULT=rank=2,kind=slow,delay_us=50000 run -t 120 "$SHAKEDOWN" run \
	--no-progress --local 4 --plan "$PLAN" --db "$VDB"
is "$rc" 6 "a slow rank in block 2-3: exit 6"
run -t 60 "$SHAKEDOWN" report --db "$VDB" --format html -o "$TMPD/v.html"
is "$rc" 0 "its HTML report: exit 0"
like "$(cat "$TMPD/v.html")" '<svg class="bars" data-test="1" data-subjects="2" data-shown="2"' \
	"bars of both blocks against their median, numbered as their plan test"
like "$(cat "$TMPD/v.html")" 'FAILED: 1 of 2 subjects passed their checks; bad nodes: <span id="bad-nodes">none</span>' \
	"the verdict counts the test whose block failed its peers expectation"
is "$(grep -o '<rect class="bar failed"' "$TMPD/v.html" | wc -l | tr -d ' ')" 1 \
	"one of them failed, and is drawn so"
like "$(cat "$TMPD/v.html")" "<td>ranks 2-3</td><td>[^<]*</td><td[^>]*>[^<]*</td><td[^>]*>[^<]*</td><td class=\"fail\">FAILED</td>" \
	"and the table says which, in words"

# -- a training run against its reference, a gemm run ---------------------
TDB=$TMPD/t.db
run -t 120 "$SHAKEDOWN" train --config test --steps 30 --no-progress --db "$TDB"
"$SHAKEDOWN" reference create --name r1 --from latest --db "$TDB" >/dev/null 2>&1
run -t 120 "$SHAKEDOWN" train --config test --steps 30 --no-progress --db "$TDB" --reference r1
is "$rc" 0 "a training run judged against a reference"
run -t 60 "$SHAKEDOWN" report --db "$TDB" --format html -o "$TMPD/t.html"
is "$rc" 0 "its HTML report: exit 0"
steps=$(sqlite3 "$TDB" "SELECT count(*) FROM train_loss_v WHERE run_id = (SELECT max(id) FROM runs) AND loss IS NOT NULL")
is "$(grep -c "<circle [^>]*class=\"lpt\"" "$TMPD/t.html")" "$steps" \
	"the loss curve: a point per recorded step"
like "$(cat "$TMPD/t.html")" "reference mean loss" "with the reference's curve"
like "$(cat "$TMPD/t.html")" "tokens/s per device \\(tgs\\)</dt><dd>[0-9.e+]+</dd>" "and tgs"
GDB=$TMPD/g.db
run -t 120 "$SHAKEDOWN" gemm --local 2 --db "$GDB" --sizes 256 --width 0 -n 2 -w 1 --peers 0.01
run -t 60 "$SHAKEDOWN" report --db "$GDB" --format html -o "$TMPD/g.html"
is "$rc" 0 "a gemm run's HTML report: exit 0"
is "$(sed -n '/id="gemm"/,/<\/table>/p' "$TMPD/g.html" | grep -c '^<tr><td')" \
	"$(sqlite3 "$GDB" "SELECT count(*) FROM gemm_devices")" "a row per device and type"

# -- upload --html: the page beside the JSON, to a real collector --------
if "$SHAKEDOWN" upload --pending --db /nonexistent/x.db 2>&1 |
	grep -q "built without libcurl"; then
	skip 8 "shakedown was built without libcurl"
else
	"$SHAKEDOWN" report "$BAD" --db "$DB" --format html -o "$TMPD/want.html"
	start_server up 201
	run -t 60 "$SHAKEDOWN" upload "$BAD" --url "http://127.0.0.1:$PORT/api/runs" --db "$DB" --html
	is "$rc" 0 "upload --html: exit 0"
	like "$out" "sent the HTML report of $BAD to http://127\\.0\\.0\\.1:$PORT/api/runs \\(HTTP 201\\)" \
		"says the page was sent"
	is "$(requests "$LOG")" 2 "two requests: the JSON, then the HTML"
	is "$(field "$LOG" 2 'r["headers"]["Content-Type"] + " " + r["headers"]["Idempotency-Key"]')" \
		"text/html; charset=utf-8 $BAD.html" \
		"the page as text/html with its own idempotency key"
	is "$(field "$LOG" 2 'r["body"] == open(sys.argv[1].rsplit("/", 2)[0] + "/want.html", encoding="utf-8").read()')" \
		True "the body is the page report --format html writes"
	start_server half 201,400
	run -t 60 "$SHAKEDOWN" upload "$BAD" --url "http://127.0.0.1:$PORT/api/runs" --db "$DB" --html
	is "$rc" 3 "the collector refuses the page: exit 3"
	like "$err" "the JSON report of $BAD was sent, its HTML report was not: .*400.*; send both again with 'shakedown upload $BAD --html'" \
		"says the JSON was sent and what to do"
	run -t 60 "$SHAKEDOWN" upload --pending --html --db "$DB" --url "http://127.0.0.1:$PORT/"
	is "$rc" 2 "--html with --pending: exit 2"
fi

done_testing
