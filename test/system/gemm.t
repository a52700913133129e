#!/bin/sh
# gemm.t - `shakedown gemm` with real ranks (--local, the Gloo backend:
# the core's CPU path through OpenBLAS): a healthy 2-rank default sweep
# passes and records its rows (the TFLOPs recomputed from them agree);
# a planted slow rank is named with its host, as a bad node, exit 6; a
# planted wrong element is caught, exit 1; a lost rank is exit 4 and
# recorded so; a locked database loses nothing (the journal, exit 7,
# db recover); a peak judges; JSON lines; the
# builtin loop without a BLAS; bad options and faults that cannot apply
# say so with exit 2.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"

G="$SHAKEDOWN gemm"
DB="$TMPD/g.db"
SQ() { sqlite3 -batch "$DB" "$@"; }
# these machines share 2 cores with other work: a healthy pair can differ
# by 2x, so the healthy runs ask 0.3 of the peer median; a planted slow
# rank is 10x slower and more
SMALL="--sizes 256,512 --width 0 -n 3 -w 1"

# -- a healthy 2-rank sweep, the default one ------------------------------
run -t 120 $G --local 2 --db "$DB" --peers 0.3
is "$rc" 0 "a healthy 2-rank default sweep: exit 0"
diag "$(printf '%s\n' "$out" | head -12)"
like "$out" "sweep: fp32; square 256 512 1024 2048; width 768 over 1024 tokens: qkv 1024x2304x768, fc 1024x3072x768, proj 1024x768x3072" \
	"the default CPU sweep: squares and a GPT-2 block's three layers"
like "$out" "^ +0  .*  fp32 +[0-9.]+  [a-z]+ [0-9x]+ +[0-9]+ +0  passed$" \
	"rank 0: its best fp32 TFLOPs, checked, nothing wrong, passed"
like "$out" "^ +1  .*  fp32 +[0-9.]+  [a-z]+ [0-9x]+ +[0-9]+ +0  passed$" "rank 1 too"
like "$out" "fp32: peer median [0-9.]+ TFLOPs \(2 devices of its name\)" \
	"the peer median it was judged by"
like "$out" "results recorded in .*g.db \(run [0-9a-f-]{36}\)" "recorded"
is "$(SQ "SELECT status, exit_status, nranks FROM runs")" "passed|0|2" \
	"a gemm run is a row of runs"
is "$(SQ "SELECT count(*), count(DISTINCT rank), sum(best), sum(wrong),
	min(checked) > 0 FROM gemm_results")" "14|2|2|0|1" \
	"gemm_results: 7 products x 2 ranks, one best each, none wrong, all checked"
is "$(SQ "SELECT group_concat(status) FROM gemm_devices")" "passed,passed" \
	"gemm_devices: both passed"
is "$(SQ "SELECT count(*) FROM gemm_results
	WHERE abs(tflops - 2.0 * m * n * k / time_us / 1e6) > 1e-9 * tflops")" 0 \
	"TFLOPs recomputed from m, n, k and time_us agree with the recorded"
best0=$(SQ "SELECT printf('%.4f', tflops) FROM gemm_results WHERE rank = 0 AND best")
like "$out" "^ +0  .*  fp32 +$best0 " "the printed best is the recorded best ($best0)"
is "$(SQ "SELECT count(*) FROM gemm_results_v WHERE run_status = 'passed'")" 14 \
	"gemm_results_v joins the run"
run sqlite3 -batch -header -csv "$DB" ".read $top_srcdir/sql/queries/slowest_devices.sql"
like "$(printf '%s\n' "$out" | head -1)" \
	"^host,pci_bus_id,device,dtype,runs,avg_best_tflops,pct_of_same_devices,last_run_at$" \
	"slowest_devices.sql: its columns"
like "$out" "CPU .*,fp32,1,[0-9.]+,100.0," "slowest_devices.sql: the host's CPU"
run $SHAKEDOWN report --db "$DB"
like "$out" "gemm devices" "report shows the gemm devices"

# -- a slow rank: named with its host, a bad node ------------------------
SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=50000 run -t 60 $G --local 2 \
	--db "$DB" $SMALL
is "$rc" 6 "a planted slow rank: exit 6"
host=$(SQ "SELECT host FROM ranks WHERE rank = 1 ORDER BY run_id DESC LIMIT 1")
like "$out" "FAILED rank 1 \($host\) CPU .*fp32: best [0-9.]+ TFLOPs .* is below 0.80 of the peer median" \
	"the slow rank is named, with why"
unlike "$out" "FAILED rank 0" "its healthy peer is not"
like "$err" "below its expectations: rank 1 \($host\) fp32; bad nodes: $host" \
	"the message names it and its host as a hostlist"
run $SHAKEDOWN report --bad-nodes --db "$DB"
is "$(printf '%s\n' "$out" | head -1)" "$host" "report --bad-nodes: line 1 is its host"
is "$(SQ "SELECT rank, status FROM gemm_devices WHERE run_id = 2 ORDER BY rank")" \
	"0|passed
1|failed" "gemm_devices: rank 1 failed"

# -- wrong math: one element of rank 0's first product -------------------
SHAKEDOWN_FAULT=rank=0,kind=corrupt,index=3 run -t 60 $G --local 2 \
	--db "$DB" $SMALL
is "$rc" 1 "a planted wrong element: exit 1"
like "$out" "FAILED rank 0 .*wrong math: 1 element beyond the tolerance; first in square 256x256x256 at row 0, column 3" \
	"the wrong element is named: rank, product, row and column"
like "$err" "wrong math: rank 0 \(.*\) fp32" "the message says wrong math"
is "$(SQ "SELECT rank, shape, m, wrong FROM gemm_results WHERE run_id = 3
	AND wrong > 0")" "0|square|256|1" "recorded: 1 wrong element, rank 0's 256"
is "$(SQ "SELECT status, exit_status FROM runs WHERE id = 3")" "failed|1" \
	"the run failed with exit status 1"

# -- a rank lost mid-sweep: exit 4, and the record says so ------------------
SHAKEDOWN_FAULT=rank=1,kind=kill run -t 60 $G --local 2 --db "$DB" $SMALL
is "$rc" 4 "a rank killed before its first product: exit 4"
like "$err" "rank 1 \($host, pid [0-9]+\) was lost during (start-up|gemm entry 1 of 2)" \
	"the lost rank is named, with its host and what it was doing"
is "$(SQ "SELECT status, exit_status FROM runs WHERE id = 4")" "failed|4" \
	"the run is recorded as failed, exit status 4 (as run records it)"
is "$(SQ "SELECT kind, subject FROM suspects WHERE run_id = 4")" "node|$host" \
	"the lost rank's node is recorded as a suspect"

# -- a rank lost after a product: what every rank finished is kept ---------
# (measured, not judged: a device's verdict needs the whole sweep)
MDB=$TMPD/mid.db
SHAKEDOWN_FAULT=rank=1,kind=kill,iter=1 run -t 60 $G --local 2 --db "$MDB" $SMALL
is "$rc" 4 "a rank killed before its second product: exit 4"
like "$err" "rank 1 \($host, pid [0-9]+\) was lost during gemm entry [12] of 2" \
	"the lost rank is named"
is "$(sqlite3 "$MDB" "SELECT group_concat(rank || ' ' || m, ',') FROM
	(SELECT rank, m FROM gemm_results ORDER BY rank, m)")" "0 256,1 256" \
	"the first product of both ranks is recorded"
is "$(sqlite3 "$MDB" "SELECT count(*) FROM gemm_devices; SELECT status ||
	' ' || exit_status FROM runs")" "0
failed 4" "no device judged on half a sweep; the run failed, exit 4"
SHAKEDOWN_FAULT=rank=1,kind=kill,iter=2 run -t 60 $G --local 2 --db none $SMALL
is "$rc" 2 "a kill planted past the sweep: exit 2"
like "$err" "iter=2 never fires: kind=kill acts before gemm entry iter \+ 1, and this sweep has entries 1 to 2; give iter=0 to 1" \
	"refused with the entries it could take"

# -- SIGTERM while a product outlives the grace: the products finished
# before it are kept, the one in flight abandoned
TDB=$TMPD/term.db
$G --local 2 --sizes 128,4096 --width 0 -n 100 -w 0 --db "$TDB" \
	>"$TMPD/term.out" 2>"$TMPD/term.err" &
pid=$!
k=0
while [ $k -lt 300 ] && [ -z "$(sqlite3 "$TDB" 'SELECT id FROM runs' 2>/dev/null)" ]; do
	sleep 0.1
	k=$((k + 1))
done
sleep 3 # the 128 products take milliseconds; a 4096 one, 100 times, minutes
kill -TERM "$pid"
wait "$pid"
rc=$?
is "$rc" 5 "SIGTERM mid-product: exit 5"
like "$(cat "$TMPD/term.err")" "cancelled by a signal; a product was cut short mid-way after 2 s; the products every rank finished before it are kept" \
	"says what was cut short and what is kept"
is "$(sqlite3 "$TDB" "SELECT count(*) FROM gemm_results WHERE m = 128;
	SELECT count(*) FROM gemm_results WHERE m = 4096; SELECT status ||
	' ' || exit_status FROM runs")" "2
0
cancelled 5" "both ranks' 128 products are recorded, none of 4096; cancelled, exit 5"

# -- never lost: the database locked through the run ------------------------
# another process takes the write lock once the run has its row, and
# keeps it past the end: the rows go to the journal, exit 7, and
# `db recover` puts them in.  Rank 0's record waits 2 s on each write,
# longer than the ranks' rendezvous bound (-T 2 plus 5 s): the other rank
# waits for rank 0's word as long as the record may take (it lost rank 0
# and the results, exit 4, when it gave up after -T plus 5 s)
if command -v python3 >/dev/null; then
	LDB=$TMPD/locked.db
	python3 -c '
import os, sqlite3, sys, time
start = time.time()
while time.time() - start < 60:
    try:
        db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
        if db.execute("SELECT count(*) FROM runs").fetchone()[0] > 0:
            break
        db.close()
    except sqlite3.Error:
        pass
    time.sleep(0.02)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
while not os.path.exists(sys.argv[2]) and time.time() - start < 120:
    time.sleep(0.02)
db.execute("ROLLBACK")
' "$LDB" "$TMPD/release" >"$TMPD/held" 2>&1 &
	holder=$!
	SHAKEDOWN_DB_BUSY_TIMEOUT_MS=2000 \
	SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=100000 run -t 120 $G --local 2 \
		-T 2 --db "$LDB" $SMALL
	: >"$TMPD/release"
	wait "$holder"
	ok 'grep -q held "$TMPD/held"' "the lock was held through the run"
	is "$rc" 7 "the record is incomplete: exit 7"
	# (the products, the verdicts, the suspects: three batches)
	like "$err" "the record in $LDB is incomplete: 3 batches of verdicts or suspects, its end could not be written \(database is locked\); all of it is kept in the journal $LDB\.[0-9a-f-]{36}\.run-[0-9a-f-]{36}\.pending\.sql" \
		"says what is missing, and where it is kept (named by the database and the run)"
	unlike "$out" "results recorded" "never says recorded"
	like "$out" "FAILED rank 1 .* below 0.80 of the peer median" \
		"the table is printed"
	is "$(cat "$LDB".*.pending.sql | grep -c '^INSERT INTO gemm_results ')" 4 \
		"the journal holds the 4 products"
	run $SHAKEDOWN db recover --db "$LDB"
	is "$rc" 0 "db recover: exit 0"
	is "$(sqlite3 "$LDB" "SELECT count(*) FROM gemm_results; SELECT
		group_concat(status) FROM gemm_devices; SELECT status || ' ' ||
		exit_status FROM runs")" "4
passed,failed
error 7" "the products, the verdicts and the run's end (exit 7) are in"
else
	skip 9 "python3 is needed to hold a lock"
fi

# -- the launcher SIGKILLed mid-product: its ranks (told by the kernel,
# PR_SET_PDEATHSIG) abandon the product in flight and leave within the
# grace, and the run is recorded as cancelled, exit status 5 (as run's)
$G --local 2 --sizes 4096 --width 0 -n 100 -w 0 --db "$TMPD/orphan.db" \
	>/dev/null 2>&1 &
pid=$!
kill_launcher "$pid" "$TMPD/orphan.db"
wait_gone "$ranks"
diag "the ranks were gone about $((n / 10)).$((n % 10)) s after the launcher was killed"
ok '[ -n "$ranks" ] && [ -z "$left" ] && [ $n -le 60 ]' \
	"a SIGKILLed launcher leaves no rank running (ranks $ranks; gone in $n tenths of a second, bound 6 s)"
for p in $left; do kill -KILL "$p" 2>/dev/null; done # ours, if the test failed
is "$(sqlite3 "$TMPD/orphan.db" "SELECT status, exit_status FROM runs")" \
	"cancelled|5" "and its run is recorded as cancelled, exit status 5"

# -- a peak ---------------------------------------------------------------
run -t 60 $G --local 1 --db none $SMALL --peak-tflops 1000
is "$rc" 6 "below half of a given peak: exit 6"
like "$out" "below 0.50 of its peak 1000.000 TFLOPs" "says the peak and the share"
run -t 60 $G --local 1 --db none $SMALL --peak-tflops fp32=0.001
is "$rc" 0 "above it: exit 0"
like "$out" "fp32: no peers to compare with; peak 0.001 TFLOPs, judged at 0.50 of it" \
	"one rank: no peers; the peak it was judged by"

# -- JSON lines, and the builtin loop without a BLAS ------------------------
SHAKEDOWN_BLAS=none run -t 60 $G --local 2 --db none $SMALL --format json \
	--peers 0.3
is "$rc" 0 "JSON, SHAKEDOWN_BLAS=none: exit 0"
is "$(printf '%s\n' "$out" | grep -c '"kind":"gemm",')" 4 "a line per product and rank"
is "$(printf '%s\n' "$out" | grep -c '"kind":"gemm_device",.*"status":"passed"')" 2 \
	"a line per device and type"
like "$out" '"impl":"builtin"' "the builtin loop multiplied"
if command -v python3 >/dev/null; then
	printf '%s\n' "$out" >"$TMPD/lines"
	ok "python3 -c 'import json, sys
for line in open(sys.argv[1]):
    json.loads(line)' '$TMPD/lines'" "every line is JSON"
else
	skip 1 "no python3 to parse the JSON"
fi

# -- the NCCL backend without a GPU: said in one line, exit 3 -----------------
so="$top_builddir/plugins/nccl/.libs/backend_nccl.so"
if [ -f "$so" ] && ! { command -v nvidia-smi >/dev/null 2>&1 &&
	nvidia-smi -L >/dev/null 2>&1; }; then
	ok 'nm -D "$so" | grep -q " U cublasGemmEx"' \
		"the NCCL plugin links cuBLAS (its gemm slot)"
	ok '! nm -D "$SHAKEDOWN" | grep -q -i -e cublas -e cblas_' \
		"shakedown itself links no BLAS (the CPU path loads one)"
	run -t 60 $G --backend nccl --local 1 --db none $SMALL
	is "$rc" 3 "gemm --backend nccl without a GPU: exit 3"
	like "$err" "^shakedown: no CUDA device or driver found on [^ ]+ \(cudaGetDeviceCount: [^)]+\); use --backend gloo on CPU-only nodes$" \
		"one line naming the host, the CUDA error and the fix"
else
	skip 4 "no NCCL plugin, or a GPU here (test/gpu/check.sh runs gemm on it)"
fi

# -- what is refused, with exit 2 ------------------------------------------
while IFS='|' read -r args want; do
	[ -n "$args" ] || continue
	# shellcheck disable=SC2086
	run -t 30 $G --db none $args
	is "$rc" 2 "gemm $args: exit 2"
	like "$err" "$want" "gemm $args: says $want"
done <<'EOF'
--sizes 0|--sizes: '0' is not a size from 1 to 65536
--sizes 512-256|--sizes: '512-256' is not a size
--dtype int8|--dtype: unknown type 'int8'; use fp32, tf32, bf16, fp16, fp8 or all
--dtype bf61|did you mean 'bf16'
--peers 1.5|--peers '1.5' must be a share of the peer median
--peak-tflops fp99=1|--peak-tflops: unknown type 'fp99'
--peak-tflops -3|--peak-tflops: '-3' is not a number of TFLOPs
--format xml|--format 'xml' must be text or json
--width 0 --tokens 64|--tokens is for the training shapes, which --width 0 leaves out
--sizes none --width 0|leave nothing to measure
--width 20000|--width '20000' must be a model width
--frobnicate|unknown option '--frobnicate'; see 'shakedown help gemm'
--local 2 --dtype bf16 --sizes 256 --width 0|nothing was measured \(bf16: not on this device: the CPU path multiplies fp32 only
EOF
SHAKEDOWN_FAULT=rank=0,kind=slow,op=all_reduce run -t 30 $G --local 1 --db none $SMALL
is "$rc" 2 "a fault naming an op: exit 2"
like "$err" "op, size and in_place do not apply to gemm" "says what applies"
SHAKEDOWN_FAULT=rank=4,kind=slow run -t 30 $G --local 2 --db none $SMALL
is "$rc" 2 "a fault on a rank outside the job: exit 2"
like "$err" "rank=4 is not a rank of this job \(0 to 1\)" "names the ranks"
SHAKEDOWN_FAULT=rank=0,kind=corrupt,index=70000 run -t 30 $G --local 1 --db none $SMALL
is "$rc" 2 "a corrupt index past the first product's checked elements: exit 2"
like "$err" "index=70000 is past the 65536 elements checked of the first product" \
	"says how many there are"

done_testing
