#!/bin/sh
# db_lost.t - a write that fails is never reported as recorded: another
# process takes the database's write lock in the middle of a run, for
# longer than the busy timeout.  Released before the run ends, the tests
# that could not be written are written at the end and the run passes;
# held past the end, the run says what its record lacks and exits 7, and
# does not print "results recorded".  A disk that fills mid-run (a small
# tmpfs the test mounts) is said the same way, and so are damaged pages
# behind a valid header.  What could not be written is kept in a journal
# of its own, named by the database's identity and the run (beside the
# database, or in $TMPDIR when the disk is full), and goes in with
# `shakedown db recover`, or with the next run into the database; into
# that database only: two databases with the same file name, their
# journals side by side in $TMPDIR, each take their own.  A run whose own
# row could not be written is journaled and recovered whole, and a run
# that exits 7 says the same of its journal on stderr, stdout and in the
# database.
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

# the identity of database $1, which names its journals
dbid() { sqlite3 "$1" "SELECT value FROM meta WHERE key = 'database_uuid'"; }
U='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'

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
ID=$(dbid "$DB")
JB=$(ls "$DB".*.pending.sql 2>/dev/null)
like "$(cat "$TMPD/err.b")" "the record in $DB is incomplete: 3 tests, 3 batches of verdicts or suspects, its end could not be written \\(database is locked\\); all of it is kept in the journal $DB\\.$ID\\.run-$U\\.pending\\.sql: end what holds the lock, then run 'shakedown db recover --db $DB' \\(the next run into it replays it too\\)" \
	"says what is missing, why, where it is kept (named by the database and the run) and how to recover it"
ok '[ -f "$JB" ] && grep -qF "$JB" "$TMPD/err.b"' "the journal it names is there"
# one sentence on every channel: stderr, stdout's last line, the run's
# message in the database (read once the journal is in)
SENT=$(sed -n 's/^shakedown: \(the record in .*\)$/\1/p' "$TMPD/err.b")
# (the summary wraps its lines at 80 columns, going on in "#   " lines)
awk 'NR > 1 && /^#   / { sub(/^#   /, ""); printf " %s", $0; next }
     NR > 1 { print "" } { printf "%s", $0 } END { print "" }' \
	"$TMPD/out.b" >"$TMPD/out.joined"
ok 'grep -qF -- "$SENT" "$TMPD/out.joined"' "stdout says the same sentence as stderr"
unlike "$(cat "$TMPD/out.b" "$TMPD/err.b")" "nothing to keep|nor kept in a journal" \
	"and no channel says it was not kept"
unlike "$(cat "$TMPD/out.b")" "results recorded" "and never says recorded"
like "$(cat "$TMPD/out.b")" "# 3 subjects: 3 passed;" "the printed results are whole"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests")" 0 \
	"nothing was written under the lock (checked, not assumed)"
is "$(head -2 "$JB")" "-- shakedown journal 2
-- database $ID" "the journal is beside the database, and names it"
nmeas=$(grep -c '^INSERT INTO measurements ' "$JB")
ok '[ "$nmeas" -gt 0 ]' "the journal holds the tests' measurements ($nmeas)"
cp "$JB" "$TMPD/b.journal.copy"
# the lock gone, the journal goes in, whole
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 0 "db recover: exit 0"
like "$out" "recovered 3 tests \\([0-9]+ statements\\) from $JB" "says what it recovered"
is "$(sqlite3 "$DB" "SELECT count(*) || ' ' || min(status) FROM tests")" \
	"3 passed" "every test is in the database now"
is "$(sqlite3 "$DB" "SELECT count(*) FROM measurements")" "$nmeas" \
	"with its measurements"
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts v JOIN tests t
	ON t.id = v.test_id")" 3 "and its verdicts, tied to their tests"
is "$(sqlite3 "$DB" "SELECT status || ' ' || exit_status FROM runs")" \
	"error 7" "and the run's end as it was said (the record was incomplete then)"
is "$(sqlite3 "$DB" "SELECT message FROM runs")" "$SENT" \
	"the run's message in the database is the sentence of stderr"
ok '[ ! -e "$JB" ]' "the journal is removed once replayed"
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 0 "a second db recover: exit 0"
like "$out" "nothing to recover" "and nothing to do"
# the same journal again: refused whole, nothing doubled, the file kept
cp "$TMPD/b.journal.copy" "$JB"
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 7 "a journal replayed before: exit 7"
like "$err" "nothing recovered: .*UNIQUE constraint failed.*replayed before\\?\\); nothing of it went in and it is kept" \
	"says its run is in the database already, and that it is kept"
unlike "$err" "remove" "and advises no removal (what is in the database may be part of it)"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests")" 3 "nothing was written twice"
ok '[ -e "$JB" ]' "and the journal stays"
rm -f "$JB"

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
like "$err" "note: replayed $DB\\.$(dbid "$DB")\\.run-$U\\.pending\\.sql into $DB: what an earlier run could not write \\([1-3] tests?, [0-9]+ statements\\)" \
	"it replays the journal first, and says so"
is "$(sqlite3 "$DB" "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM tests GROUP BY run_id ORDER BY run_id)")" \
	"3 3" "both runs' tests are in the database"
is "$(ls "$DB".*.pending.sql 2>/dev/null)" "" "and the journal is gone"

# --- a journal that is not one is refused, and nothing changes --------------
# (a version 1 journal, DB.pending.sql, is still replayed where it lies)
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
	J=$(ls "$TMPD"/jtmp/full.db.*.pending.sql 2>/dev/null)
	like "$J" "^$TMPD/jtmp/full\\.db\\.$(dbid "$DB")\\.run-$U\\.pending\\.sql\$" \
		"the journal in \$TMPDIR is named by the database and the run"
	like "$(cat "$TMPD/err.full")" "the record in $DB is incomplete: .*could not be written \\(database or disk is full\\); all of it is kept in the journal $J: free space on its disk, then run 'shakedown db recover --db $DB --journal $J'" \
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
	skip 8 "cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN)"
fi

# --- the run's own row cannot be written: journaled, and recovered whole ----
# db_writer records a run through the same recorder; -W makes it wait,
# the database open, until another process (sqlite3, BEGIN IMMEDIATE) has
# taken the write lock, which it holds past the run's end
W="$top_builddir/test/system/db_writer"
DB=$TMPD/row.db
"$W" -q "$DB"
rowrun() { # DB GO: a run that waits for GO once it has opened DB
	rm -f "$2" "$2.open"
	SHAKEDOWN_DB_BUSY_TIMEOUT_MS=200 "$W" -W "$2" "$1" \
		>"$TMPD/out.$(basename "$2")" 2>"$TMPD/err.$(basename "$2")" &
	runner=$!
	n=0
	while [ ! -e "$2.open" ] && [ $n -lt 600 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	# the lock, held until the run has ended
	{ printf 'BEGIN IMMEDIATE;\n.shell touch %s\n' "$2"
	  printf '.shell while kill -0 %s 2>/dev/null; do sleep 0.05; done\n' "$runner"
	  printf 'ROLLBACK;\n'; } | sqlite3 "$1" >/dev/null 2>&1 &
	holder=$!
	wait "$runner"
	rc=$?
	wait "$holder"
}
rowrun "$DB" "$TMPD/go-row"
is "$rc" 1 "the run's own row under the lock: the writer fails (its record is incomplete)"
ROWUUID=$(cat "$TMPD/out.go-row")
JR=$DB.$(dbid "$DB").run-$ROWUUID.pending.sql
like "$(cat "$TMPD/err.go-row")" "the record in $DB is incomplete: the run itself, 2 tests, its end could not be written \\(database is locked\\); all of it is kept in the journal $JR:" \
	"says the run itself could not be written, and where it is kept"
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs WHERE uuid = '$ROWUUID'")" 0 \
	"the run's row is not in the database (checked, not assumed)"
is "$(grep -c '^INSERT INTO runs ' "$JR")" 1 "the journal holds the run's own row"
run -t 30 $SHAKEDOWN db recover --db "$DB"
is "$rc" 0 "db recover: exit 0"
is "$(sqlite3 "$DB" "SELECT r.status || ' ' || count(t.id) FROM runs r
	JOIN tests t ON t.run_id = r.id WHERE r.uuid = '$ROWUUID'")" "passed 2" \
	"the run is in the database whole: its row, its tests, its end"
is "$(sqlite3 "$DB" "SELECT count(*) FROM measurements m JOIN tests t
	ON t.id = m.test_id JOIN runs r ON r.id = t.run_id
	WHERE r.uuid = '$ROWUUID'")" 16 "with every measurement"
ok '[ ! -e "$JR" ]' "and the journal is gone"

# --- two databases with the same file name: each takes only its own --------
# two folders, each a small file system of its own, both full once the run
# has opened its database: neither run can write its row, nor its journal
# beside the database, so both journals go to one $TMPDIR
if mkdir -p "$TMPD/x" "$TMPD/y" "$TMPD/jshared" &&
   mount -t tmpfs -o size=2m tmpfs "$TMPD/x" 2>/dev/null &&
   mount -t tmpfs -o size=2m tmpfs "$TMPD/y" 2>/dev/null; then
	at_exit "umount '$TMPD/x' '$TMPD/y' 2>/dev/null"
	for d in x y; do
		"$W" -q "$TMPD/$d/results.db"
		rm -f "$TMPD/go-$d" "$TMPD/go-$d.open"
		TMPDIR=$TMPD/jshared "$W" -W "$TMPD/go-$d" "$TMPD/$d/results.db" \
			>"$TMPD/out.$d" 2>"$TMPD/err.$d" &
		runner=$!
		n=0
		while [ ! -e "$TMPD/go-$d.open" ] && [ $n -lt 600 ]; do
			sleep 0.05
			n=$((n + 1))
		done
		dd if=/dev/zero of="$TMPD/$d/filler" bs=4k 2>/dev/null
		: >"$TMPD/go-$d"
		wait "$runner"
		rm -f "$TMPD/$d/filler"
	done
	IX=$(dbid "$TMPD/x/results.db")
	IY=$(dbid "$TMPD/y/results.db")
	JX=$(ls "$TMPD"/jshared/results.db."$IX".run-*.pending.sql 2>/dev/null)
	JY=$(ls "$TMPD"/jshared/results.db."$IY".run-*.pending.sql 2>/dev/null)
	ok '[ "$IX" != "$IY" ] && [ -f "$JX" ] && [ -f "$JY" ]' \
		"two journals in one \$TMPDIR, one for each database with the file name results.db"
	like "$(cat "$TMPD/err.x")" "the run itself, 2 tests, its end could not be written \\(database or disk is full\\); all of it is kept in the journal $JX: free space on its disk, then run 'shakedown db recover --db $TMPD/x/results.db --journal $JX'" \
		"the first run names its own journal"
	cp "$JY" "$TMPD/y.journal.copy"
	TMPDIR=$TMPD/jshared run -t 30 $SHAKEDOWN db recover --db "$TMPD/x/results.db"
	is "$rc" 0 "db recover of the first: exit 0"
	like "$out" "recovered 2 tests \\([0-9]+ statements\\) from $JX" "it takes its own journal"
	like "$out" "skipped $JY: it is the journal of database $IY, not of $TMPD/x/results.db \\(database $IX\\); left alone" \
		"and says which journal it skipped and why"
	unlike "$out$err" "remove" "advising no removal"
	ok '[ ! -e "$JX" ] && cmp -s "$JY" "$TMPD/y.journal.copy"' \
		"its journal is gone, the other's is there as it was"
	is "$(sqlite3 "$TMPD/x/results.db" "SELECT count(*) FROM runs")" 2 \
		"the first database has its two runs, and no run of the second"
	run -t 30 $SHAKEDOWN db recover --db "$TMPD/x/results.db" --journal "$JY"
	is "$rc" 2 "the other's journal named with --journal: exit 2"
	like "$err" "nothing recovered: skipped $JY: it is the journal of database $IY" \
		"refused, and why"
	ok 'cmp -s "$JY" "$TMPD/y.journal.copy"' "and left alone"
	TMPDIR=$TMPD/jshared run -t 30 $SHAKEDOWN db recover --db "$TMPD/y/results.db"
	is "$rc" 0 "db recover of the second: exit 0"
	like "$out" "recovered 2 tests \\([0-9]+ statements\\) from $JY" "it takes its own"
	is "$(sqlite3 "$TMPD/y/results.db" "SELECT count(*) || ' ' ||
		sum(status = 'passed') FROM runs")" "2 2" \
		"the second database has its two runs, whole"
	is "$(ls "$TMPD/jshared")" "" "no journal is left"
	umount "$TMPD/x" "$TMPD/y"
else
	skip 14 "cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN)"
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
like "$err" "the record in $DB is incomplete: 3 tests, 3 batches of verdicts or suspects(, its end)? could not be written \\(database disk image is malformed\\); all of it is kept in the journal $DB\\.$(dbid "$DB")\\.run-$U\\.pending\\.sql; the file is damaged: run 'shakedown db recover --db $DB --into NEW.db' to copy what it still holds" \
	"says the file is damaged, where the results are kept, and how to salvage"
unlike "$out" "results recorded" "and never says recorded"
# the salvage the message gives: what the file still holds, then the journal
run -t 30 $SHAKEDOWN db recover --db "$DB" --into "$TMPD/new.db"
is "$rc" 0 "db recover --into: exit 0"
like "$out" "salvaged into $TMPD/new.db: copied [0-9]+ rows \\(of rows whose parent could not be read: 3 kept without it, 6 left out\\); tests cut short after 0 rows \\(database disk image is malformed\\)" \
	"says which table was cut short, and what that did to the rows under it (the first run's 3 verdicts, 6 measurements)"
is "$(sqlite3 "$TMPD/new.db" "SELECT count(*) FROM verdicts WHERE run_id = 1 AND test_id IS NULL")" 3 \
	"the first run's verdicts are kept, under their run, without the lost tests"
like "$out" "recovered 3 tests \\([0-9]+ statements\\) from $DB\\.$(dbid "$DB")\\.run-$U\\.pending\\.sql" \
	"and what it recovered: the journal of the damaged file, whose identity the copy keeps"
is "$(dbid "$TMPD/new.db")" "$(dbid "$DB")" "the copy has the damaged file's identity"
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

# --- a lock held through a run of many tests: waited out once, not
# once a test (each of 10 tests' writes waited the whole busy timeout:
# 10 x 5 s) ------------------------------------------------------------------
cat >"$TMPD/many.yaml" <<'EOF2'
name: many
defaults: {dtype: float32, min_bytes: 4K, max_bytes: 4K, iters: 2, warmup: 0}
tests:
  - op: all_reduce
  - op: broadcast
  - op: all_gather
  - op: reduce
  - op: reduce_scatter
  - {op: all_reduce, dtype: int32}
  - {op: broadcast, dtype: int32}
  - {op: all_gather, dtype: int32}
  - {op: reduce, dtype: int32}
  - {op: reduce_scatter, dtype: int32}
EOF2
DB=$TMPD/many.db
hold "$DB" "$TMPD/release-m"
t0=$(date +%s)
env SHAKEDOWN_DB_BUSY_TIMEOUT_MS=5000 \
	SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=50000 \
	$SHAKEDOWN run --no-progress --local 2 --plan "$TMPD/many.yaml" \
	--db "$DB" >"$TMPD/out.m" 2>"$TMPD/err.m"
rc=$?
t1=$(date +%s)
: >"$TMPD/release-m"
wait "$holder"
is "$rc" 7 "10 tests under a held lock: exit 7, all of it journaled"
ok '[ $((t1 - t0)) -lt 35 ]' \
	"the lock waited out about twice (5 s each), not once a test ($((t1 - t0)) s)"

# --- a lock held longer than -T: the record waits, the ranks do not (rank
# 0's writes between tests wait at most a second; the end waits the busy
# timeout): exit 7, no rank taken for lost ---------------------------------
DB=$TMPD/long.db
hold "$DB" "$TMPD/release-l"
env SHAKEDOWN_DB_BUSY_TIMEOUT_MS=8000 \
	SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=100000 \
	$SHAKEDOWN run --no-progress --local 2 --plan "$PLAN" -T 3 \
	--db "$DB" >"$TMPD/out.l" 2>"$TMPD/err.l"
rc=$?
: >"$TMPD/release-l"
wait "$holder"
is "$rc" 7 "a lock held past -T (3 s) with an 8 s busy timeout: exit 7, not a lost rank"
unlike "$(cat "$TMPD/err.l")" "lost|did not answer|hung" "no rank is blamed for the lock"

done_testing
