#!/bin/sh
# db_lost.t - a write that fails is never reported as recorded: another
# process takes the database's write lock in the middle of a run, for
# longer than the busy timeout.  Released before the run ends, the tests
# that could not be written are written at the end and the run passes;
# held past the end, the run says what its record lacks and exits 7, and
# does not print "results recorded".  A disk that fills mid-run (a small
# tmpfs the test mounts) is said the same way.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"
command -v python3 >/dev/null || skip_all "python3 is needed to hold a lock (apt-get install python3)"

PLAN=$TMPD/p.yaml
cat >"$PLAN" <<'EOF'
name: lost
defaults: {dtype: float32, min_bytes: 4K, max_bytes: 16K, step_factor: 4,
           iters: 3, warmup: 0, in_place: false}
tests:
  - op: all_reduce
  - op: broadcast
  - op: all_gather
EOF

# hold DB FLAG: hold DB's write lock from when the run has its row until
# FLAG exists; the holder says "held" in $TMPD/held.FLAG
hold() {
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
' "$1" "$2" >"$TMPD/held.$(basename "$2")" 2>&1 &
	holder=$!
}

# the run: every operation of rank 1 waits 100 ms, so that each test
# takes about a second and the lock is taken before the first one ends
start_run() {
	SHAKEDOWN_DB_BUSY_TIMEOUT_MS=200 \
	SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=100000 \
		$SHAKEDOWN run --no-progress --local 2 --plan "$PLAN" --db "$1" \
		>"$TMPD/out.$2" 2>"$TMPD/err.$2" &
	runner=$!
}

# --- released before the end: written again, nothing lost -----------------
DB=$TMPD/a.db
hold "$DB" "$TMPD/release-a"
start_run "$DB" a
n=0
while ! grep -q held "$TMPD/held.release-a" 2>/dev/null && [ $n -lt 600 ]; do
	sleep 0.05
	n=$((n + 1))
done
ok 'grep -q held "$TMPD/held.release-a"' "another process holds the lock mid-run"
# let the first tests end under the lock, then let go before the last ends
while ! grep -q "^# Test 3" "$TMPD/out.a" && [ $n -lt 1200 ]; do
	sleep 0.05
	n=$((n + 1))
done
: >"$TMPD/release-a"
wait "$holder"
wait "$runner"
rc=$?
is "$rc" 0 "the lock let go before the end: exit 0"
like "$(cat "$TMPD/err.a")" "result writer 'database' failed in test_end" \
	"a test could not be written under the lock (the warning says so)"
is "$(sqlite3 "$DB" "SELECT count(*) || ' ' || min(status) FROM tests")" \
	"3 passed" "every test is in the database: written again at the end"
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts v JOIN tests t
	ON t.id = v.test_id")" 3 "and every test's verdict, tied to its test"
is "$(sqlite3 "$DB" "SELECT status || ' ' || exit_status FROM runs")" \
	"passed 0" "and the run's end"
like "$(cat "$TMPD/out.a")" "# results recorded in " "so it says recorded"

# --- held past the end: said, exit 7 -----------------------------------------
DB=$TMPD/b.db
hold "$DB" "$TMPD/release-b"
start_run "$DB" b
wait "$runner"
rc=$?
: >"$TMPD/release-b"
wait "$holder"
ok 'grep -q held "$TMPD/held.release-b"' "the lock was held through the run"
is "$rc" 7 "the record is incomplete: exit 7"
like "$(cat "$TMPD/err.b")" "the record in $DB is incomplete: 3 tests, 3 batches of verdicts or suspects, its end could not be written \\(database is locked\\); the printed results above are the ones to keep" \
	"says what is missing, why, and what to do"
unlike "$(cat "$TMPD/out.b")" "results recorded" "and never says recorded"
like "$(cat "$TMPD/out.b")" "3 of 3 tests passed" "the printed results are whole"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests")" 0 \
	"nothing was written under the lock (checked, not assumed)"

# --- the disk fills mid-run: said, exit 7 ------------------------------------
# a small file system of our own, filled once the run has its row
MNT=$TMPD/small
mkdir -p "$MNT"
if mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null; then
	at_exit "umount '$MNT' 2>/dev/null"
	DB=$MNT/full.db
	start_run "$DB" full
	n=0
	while [ "$(sqlite3 "$DB" "SELECT count(*) FROM runs" 2>/dev/null)" != 1 ] &&
	      [ $n -lt 600 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null
	wait "$runner"
	rc=$?
	is "$rc" 7 "the disk full mid-run: exit 7"
	like "$(cat "$TMPD/err.full")" "the record in $DB is incomplete: .*could not be written \\(database or disk is full\\)" \
		"says the disk is full and what is missing"
	unlike "$(cat "$TMPD/out.full")" "results recorded" "and never says recorded"
	rm -f "$MNT/filler"
	like "$(sqlite3 "$DB" "SELECT status FROM runs")" "running" \
		"the file holds what was written before (the run's row)"
	umount "$MNT"
else
	skip 4 "cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN)"
fi
done_testing
