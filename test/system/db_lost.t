#!/bin/sh
# db_lost.t - a write that fails is never reported as recorded: another
# process takes the database's write lock in the middle of a run, for
# longer than the busy timeout.  Released before the run ends, the tests
# that could not be written are written at the end and the run passes;
# held past the end, the run says what its record lacks and exits 7, and
# does not print "results recorded".  A disk that fills mid-run (a small
# tmpfs the test mounts) is said the same way, and so are damaged pages
# behind a valid header.  What could not be written is kept in a journal
# (beside the database, or in $TMPDIR when the disk is full) and goes in
# with `shakedown db recover`, or with the next run into the database.
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
	env TMPDIR="${RUN_TMPDIR:-${TMPDIR:-/tmp}}" \
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
like "$(cat "$TMPD/err.b")" "the record in $DB is incomplete: 3 tests, 3 batches of verdicts or suspects, its end could not be written \\(database is locked\\); all of it is kept in $DB.pending.sql: end what holds the lock, then run 'shakedown db recover --db $DB'" \
	"says what is missing, why, where it is kept and how to recover it"
unlike "$(cat "$TMPD/out.b")" "results recorded" "and never says recorded"
like "$(cat "$TMPD/out.b")" "# 3 subjects: 3 passed;" "the printed results are whole"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests")" 0 \
	"nothing was written under the lock (checked, not assumed)"
is "$(head -1 "$DB.pending.sql")" "-- shakedown journal 1" "the journal is beside the database"
nmeas=$(grep -c '^INSERT INTO measurements ' "$DB.pending.sql")
ok '[ "$nmeas" -gt 0 ]' "the journal holds the tests' measurements ($nmeas)"
cp "$DB.pending.sql" "$TMPD/b.journal.copy"
# the lock gone, the journal goes in, whole
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 0 "db recover: exit 0"
like "$out" "recovered 3 tests \\([0-9]+ statements\\) from $DB.pending.sql" "says what it recovered"
is "$(sqlite3 "$DB" "SELECT count(*) || ' ' || min(status) FROM tests")" \
	"3 passed" "every test is in the database now"
is "$(sqlite3 "$DB" "SELECT count(*) FROM measurements")" "$nmeas" \
	"with its measurements"
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts v JOIN tests t
	ON t.id = v.test_id")" 3 "and its verdicts, tied to their tests"
is "$(sqlite3 "$DB" "SELECT status || ' ' || exit_status FROM runs")" \
	"error 7" "and the run's end as it was said (the record was incomplete then)"
ok '[ ! -e "$DB.pending.sql" ]' "the journal is removed once replayed"
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 0 "a second db recover: exit 0"
like "$out" "nothing to recover" "and nothing to do"
# the same journal again: refused whole, nothing doubled, the file kept
cp "$TMPD/b.journal.copy" "$DB.pending.sql"
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 7 "a journal replayed before: exit 7"
like "$err" "nothing recovered: .*UNIQUE constraint failed.*replayed before\\? then remove the journal" \
	"says it is in the database already"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests")" 3 "nothing was written twice"
ok '[ -e "$DB.pending.sql" ]' "and the journal stays"
rm -f "$DB.pending.sql"

# --- replayed by the next run into the database ----------------------------
DB=$TMPD/c.db
hold "$DB" "$TMPD/release-c"
start_run "$DB" c
wait "$runner"
rc=$?
: >"$TMPD/release-c"
wait "$holder"
is "$rc" 7 "held past the end again: exit 7"
SHAKEDOWN_DB_BUSY_TIMEOUT_MS=200 \
	run -t 60 $SHAKEDOWN run --no-progress --local 2 --plan "$PLAN" --db "$DB"
is "$rc" 0 "the next run into the database: exit 0"
like "$err" "note: replayed $DB.pending.sql into $DB: what an earlier run could not write \\([1-3] tests?, [0-9]+ statements\\)" \
	"it replays the journal first, and says so"
is "$(sqlite3 "$DB" "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM tests GROUP BY run_id ORDER BY run_id)")" \
	"3 3" "both runs' tests are in the database"
ok '[ ! -e "$DB.pending.sql" ]' "and the journal is gone"

# --- a journal that is not one is refused, and nothing changes --------------
printf -- '-- shakedown journal 1\nDELETE FROM runs;\n' >"$DB.pending.sql"
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 2 "a journal with a statement no run writes: exit 2"
like "$err" "line 2: not a statement a run writes" "names the line"
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" 2 "and nothing changed"
rm -f "$DB.pending.sql"

# --- the disk fills mid-run: said, exit 7 ------------------------------------
# a small file system of our own, filled once the run has its row
MNT=$TMPD/small
mkdir -p "$MNT"
if mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null; then
	at_exit "umount '$MNT' 2>/dev/null"
	DB=$MNT/full.db
	mkdir -p "$TMPD/jtmp"
	RUN_TMPDIR=$TMPD/jtmp start_run "$DB" full
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
	J=$TMPD/jtmp/full.db.run1.pending.sql
	like "$(cat "$TMPD/err.full")" "the record in $DB is incomplete: .*could not be written \\(database or disk is full\\); all of it is kept in $J: free space on its disk, then run 'shakedown db recover --db $DB --journal $J'" \
		"says the disk is full, what is missing, and where it is kept (beside the database is full too)"
	unlike "$(cat "$TMPD/out.full")" "results recorded" "and never says recorded"
	rm -f "$MNT/filler"
	like "$(sqlite3 "$DB" "SELECT status FROM runs")" "running" \
		"the file holds what was written before (the run's row)"
	run -t 30 $SHAKEDOWN db recover --db "$DB" --journal "$J"
	is "$rc" 0 "space freed, db recover --journal: exit 0"
	is "$(sqlite3 "$DB" "SELECT count(*) FROM tests")" 3 "every test is in the database"
	umount "$MNT"
else
	skip 7 "cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN)"
fi

# --- damaged pages behind a valid header ------------------------------------
# a first run fills the tables; the tests table's root page is then
# overwritten (the header, page 1, stays valid)
DB=$TMPD/d.db
run -t 60 $SHAKEDOWN run --no-progress --local 2 --plan "$PLAN" --db "$DB" -n 1
is "$rc" 0 "a first run into the database: exit 0"
root=$(sqlite3 "$DB" "SELECT rootpage FROM sqlite_schema WHERE name = 'tests'")
psize=$(sqlite3 "$DB" "PRAGMA page_size")
head -c "$psize" /dev/urandom | dd of="$DB" bs="$psize" seek=$((root - 1)) conv=notrunc 2>/dev/null
run -t 60 $SHAKEDOWN run --no-progress --local 2 --plan "$PLAN" --db "$DB" -n 1
is "$rc" 7 "the tests table damaged: exit 7"
like "$err" "the record in $DB is incomplete: 3 tests, 3 batches of verdicts or suspects could not be written \\(database disk image is malformed\\); all of it is kept in $DB.pending.sql; the file is damaged: run 'shakedown db recover --db $DB --into NEW.db' to copy what it still holds" \
	"says the file is damaged, where the results are kept, and how to salvage"
unlike "$out" "results recorded" "and never says recorded"
# the salvage the message gives: what the file still holds, then the journal
run -t 30 $SHAKEDOWN db recover --db "$DB" --into "$TMPD/new.db"
is "$rc" 0 "db recover --into: exit 0"
like "$out" "salvaged into $TMPD/new.db: copied [0-9]+ rows \\(of rows whose parent could not be read: 3 kept without it, 6 left out\\); tests cut short after 0 rows \\(database disk image is malformed\\)" \
	"says which table was cut short, and what that did to the rows under it (the first run's 3 verdicts, 6 measurements)"
is "$(sqlite3 "$TMPD/new.db" "SELECT count(*) FROM verdicts WHERE run_id = 1 AND test_id IS NULL")" 3 \
	"the first run's verdicts are kept, under their run, without the lost tests"
like "$out" "recovered 3 tests \\([0-9]+ statements\\) from $DB.pending.sql" "and what it recovered"
is "$(sqlite3 "$TMPD/new.db" "SELECT count(*) || ' ' || min(t.status) FROM tests t WHERE t.run_id = (SELECT max(id) FROM runs)")" \
	"3 passed" "the second run's tests are in the copy, under their run"
is "$(sqlite3 "$TMPD/new.db" "SELECT count(*) FROM verdicts v JOIN tests t ON t.id = v.test_id WHERE t.run_id = 2")" \
	3 "with their verdicts tied to them"
is "$(sqlite3 "$TMPD/new.db" "SELECT count(*) FROM runs")" 2 "both runs are in the copy"
run -t 30 $SHAKEDOWN db check --db "$TMPD/new.db"
like "$out" "integrity: ok" "the copy is whole (db check)"
run -t 30 $SHAKEDOWN db recover --db "$DB" --into "$TMPD/new.db"
is "$rc" 2 "--into a file that exists: exit 2"
like "$err" "new.db exists; name a new file" "and says so"

done_testing
