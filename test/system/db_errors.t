#!/bin/sh
# db_errors.t - a database that cannot be used stops a run before any test,
# with one clear line and exit 3: a path that cannot be created, a
# directory, a file that is not SQLite, another program's SQLite file, a
# newer schema, a lock held past the busy timeout.  Also: dead runs are
# marked 'aborted' by the next process that opens the file, and live ones
# are left alone.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
command -v python3 >/dev/null || skip_all "python3 is needed to hold a lock (apt-get install python3)"
W="$top_builddir/test/system/db_writer"
R="$SHAKEDOWN run --no-progress --local 2 --op all_reduce -b 1K -e 2K -n 2 -w 1"

# check_bad NAME PATH REGEX: the recorder and `shakedown run` refuse PATH
check_bad() {
	run "$W" -q "$2"
	is "$rc" 3 "$1: the recorder refuses it (exit 3)"
	like "$err" "$3" "$1: says what is wrong"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$1: in one line"
	if have_gloo; then
		run -t 60 $R --db "$2"
		is "$rc" 3 "$1: shakedown run exits 3"
		like "$err" "$3" "$1: shakedown run says what is wrong"
		unlike "$out" "(^| )1024 " "$1: no test ran"
	else
		skip 3 "the Gloo plugin was not built"
	fi
}

check_bad "missing directory" "$TMPD/nodir/x.db" \
	"nodir/x.db: cannot create the database \(directory .*nodir: No such file or directory\); pass --db"
check_bad "a directory" "$TMPD" "is a directory; pass --db with a file name"
check_bad "read-only file system" "/proc/shakedown-test.db" \
	"/proc/shakedown-test.db: cannot (create|open|write)"
echo "hello, I am a text file" > "$TMPD/text.db"
check_bad "not SQLite" "$TMPD/text.db" \
	"text.db: file is not a SQLite database; pass --db with another path"
sqlite3 "$TMPD/other.db" "CREATE TABLE photos (id INTEGER PRIMARY KEY)"
sum_before=$(cksum <"$TMPD/other.db")
check_bad "another program's database" "$TMPD/other.db" \
	"other.db: SQLite database of another program"
is "$(cksum <"$TMPD/other.db") $(sqlite3 "$TMPD/other.db" 'PRAGMA journal_mode')" \
	"$sum_before delete" "another program's file is left as it was (not switched to WAL)"
ok '[ ! -e "$TMPD/other.db-wal" ]' "and gets no WAL file beside it"
"$W" -q "$TMPD/newer.db"; sqlite3 "$TMPD/newer.db" "PRAGMA user_version = 99"
check_bad "newer schema" "$TMPD/newer.db" \
	"newer.db: schema version 99 is newer than this shakedown knows \([0-9]+\); use a newer shakedown"

# a lock held by another process past the busy timeout: the holder says
# when it holds the write lock, and keeps it until it is told to let go
"$W" -q "$TMPD/locked.db"
python3 -c '
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
db.execute("UPDATE runs SET message = ?", ("held",))
print("held", flush=True)
start = time.time()
while not os.path.exists(sys.argv[2]) and time.time() - start < 120:
    time.sleep(0.05)
db.execute("ROLLBACK")
' "$TMPD/locked.db" "$TMPD/release" >"$TMPD/held" 2>&1 &
holder=$!
i=0
while ! grep -q held "$TMPD/held" && [ $i -lt 1200 ]; do
	sleep 0.05
	i=$((i + 1))
done
ok 'grep -q held "$TMPD/held"' "another process holds the write lock"
export SHAKEDOWN_DB_BUSY_TIMEOUT_MS=300
check_bad "locked" "$TMPD/locked.db" \
	"locked.db: database is locked by another process for more than 300 ms; retry later, raise SHAKEDOWN_DB_BUSY_TIMEOUT_MS"
unset SHAKEDOWN_DB_BUSY_TIMEOUT_MS
: >"$TMPD/release"
wait "$holder"
run "$W" -q "$TMPD/locked.db"
is "$rc" 0 "once the lock is gone, recording works"

# --db none records nothing
if have_gloo; then
	(cd "$TMPD" && run -t 60 $R --db none)
	ok "[ ! -e '$TMPD/shakedown.db' ]" "--db none creates no database"
else
	skip 1 "the Gloo plugin was not built"
fi

# runs whose writer is gone are marked 'aborted' by the next open
H=$(hostname)
sh -c 'exit 0' & dead=$!; wait $dead
sqlite3 "$TMPD/stale.db" < "$top_srcdir/sql/schema.sql"
sqlite3 "$TMPD/stale.db" "INSERT INTO runs (uuid, started_at, heartbeat_at,
	status, hostname, pid) VALUES
	('dead-pid', strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'),
	 'running', '$H', $dead),
	('old-heartbeat', '2026-01-01T00:00:00.000Z', '2026-01-01T00:10:00.000Z',
	 'running', 'elsewhere', 1),
	('alive', strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'),
	 'running', '$H', $$),
	('alive-elsewhere', strftime('%Y-%m-%dT%H:%M:%fZ'),
	 strftime('%Y-%m-%dT%H:%M:%fZ'), 'running', 'elsewhere', 1)"
run "$SHAKEDOWN" db check --db "$TMPD/stale.db"
like "$out" "running runs: +2" "db check sees what is still running"
is "$(sqlite3 "$TMPD/stale.db" "SELECT uuid || ' ' || status FROM runs ORDER BY id" | tr '\n' ' ')" \
	"dead-pid aborted old-heartbeat aborted alive running alive-elsewhere running " \
	"dead runs are aborted, live ones left running"
like "$(sqlite3 "$TMPD/stale.db" "SELECT message FROM runs WHERE uuid = 'dead-pid'")" \
	"^aborted: its process $dead on $H is gone$" "a dead process is named"
like "$(sqlite3 "$TMPD/stale.db" "SELECT message || ' ' || finished_at FROM runs WHERE uuid = 'old-heartbeat'")" \
	"^aborted: no heartbeat for [0-9]+ s 2026-01-01T00:10:00.000Z$" \
	"an old heartbeat: finished at the last heartbeat"

done_testing
