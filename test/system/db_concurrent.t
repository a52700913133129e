#!/bin/sh
# db_concurrent.t - eight processes record runs into the same new file at
# once (WAL, busy timeout, short transactions): nothing is lost, every run
# is complete and the file is sound.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
W="$top_builddir/test/system/db_writer"
DB="$TMPD/shared.db"

pids=
for i in 1 2 3 4 5 6 7 8; do
	"$W" -q -r 5 -t 3 -s 4 -H "node$i" "$DB" 2>"$TMPD/err$i" &
	pids="$pids $!"
done
failed=0
for p in $pids; do wait "$p" || failed=$((failed + 1)); done
is "$failed" 0 "eight writers at once all succeed"
is "$(cat "$TMPD"/err* | head -3)" "" "and say nothing"
is "$(sqlite3 "$DB" "SELECT count(*), count(DISTINCT uuid), sum(status = 'passed') FROM runs")" \
	"40|40|40" "every run is recorded and complete"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests")" 120 "every test"
is "$(sqlite3 "$DB" "SELECT count(*) FROM measurements")" 960 "every measurement"
is "$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT host FROM ranks GROUP BY host HAVING count(DISTINCT run_id) = 5)")" \
	8 "five runs from each writer"
is "$(sqlite3 "$DB" "SELECT count(*) FROM tests_v WHERE measurements <> 8")" 0 \
	"no test lost a measurement"
run "$SHAKEDOWN" db check --db "$DB"
is "$rc" 0 "db check: sound"

done_testing
