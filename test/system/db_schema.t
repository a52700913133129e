#!/bin/sh
# db_schema.t - the schema: a new file gets the current version with STRICT
# tables, foreign keys and the views (the training tables and views since
# version 6); the compiled-in schema is
# sql/schema.sql; a file of every earlier version (test/system/data/schema_v*.sql)
# migrates, by `db migrate` and on first use, to exactly the current schema
# with its rows intact; a newer version is refused.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
W="$top_builddir/test/system/db_writer"
SQ() { sqlite3 -batch "$@"; }
# the version this shakedown creates: the one sql/schema.sql sets
CUR=$(sed -n 's/^PRAGMA user_version = \([0-9]*\);$/\1/p' "$top_srcdir/sql/schema.sql")

# The shape of a database: every object, every column (type, not null,
# default, key) and the schema version; comments and whitespace aside.
shape() {
	SQ "$1" "PRAGMA user_version; PRAGMA application_id;
		SELECT type, name, tbl_name FROM sqlite_schema
		WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name;" &&
	for t in $(SQ "$1" "SELECT name FROM sqlite_schema
			WHERE type IN ('table', 'view') ORDER BY name"); do
		echo "== $t"
		SQ "$1" "SELECT name, type, \"notnull\", dflt_value, pk
			FROM pragma_table_info('$t')"
		SQ "$1" "SELECT name, \"unique\", origin FROM pragma_index_list('$t')
			ORDER BY name"
		SQ "$1" "SELECT \"table\", \"from\", \"to\", on_delete
			FROM pragma_foreign_key_list('$t') ORDER BY id"
	done
}

# a new database, created by the sink
run "$W" -q "$TMPD/new.db"
is "$rc" 0 "a new database is created on first use"
ok '[ "$CUR" -ge 3 ]' "sql/schema.sql sets a version ($CUR)"
is "$(SQ "$TMPD/new.db" 'PRAGMA user_version')" "$CUR" "at schema version $CUR"
is "$(SQ "$TMPD/new.db" 'PRAGMA journal_mode')" wal "in WAL mode"
is "$(SQ "$TMPD/new.db" "SELECT group_concat(name, ' ') FROM (SELECT name
	FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%) STRICT'
	ORDER BY name)")" \
	"baseline_values baselines gemm_devices gemm_results host_env jobs measurements meta ranks runs suspects tests train_metrics train_reference_steps train_references train_runs train_steps upload_outbox verdicts" \
	"every table is STRICT"
is "$(SQ "$TMPD/new.db" "SELECT group_concat(name, ' ') FROM (SELECT name
	FROM sqlite_schema WHERE type = 'view' ORDER BY name)")" \
	"busbw_history gemm_results_v host_interfaces measurements_v run_summary test_hosts_v tests_v train_loss_v train_summary_v" \
	"the views"
like "$(SQ "$TMPD/new.db" "SELECT group_concat(name, ',')
	FROM pragma_table_info('measurements_v')")" \
	"size_bytes,.*time_us,.*busbw_gbs" "units are in the column names"
is "$(shape "$TMPD/new.db")" \
	"$(SQ "$TMPD/ref.db" < "$top_srcdir/sql/schema.sql" && shape "$TMPD/ref.db")" \
	"the compiled-in schema is sql/schema.sql"

# the database's identity (since version 13): a UUID of its own, made
# once; another file has another
UUIDRE='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
ID=$(SQ "$TMPD/new.db" "SELECT value FROM meta WHERE key = 'database_uuid'")
like "$ID" "$UUIDRE" "a new database has its identity, a UUID ($ID)"
run "$W" -q "$TMPD/new.db"
is "$(SQ "$TMPD/new.db" "SELECT value FROM meta WHERE key = 'database_uuid'")" \
	"$ID" "a later run leaves it as it was"
run "$W" -q "$TMPD/other.db"
ok '[ "$(SQ "$TMPD/other.db" "SELECT value FROM meta")" != "$ID" ]' \
	"another database has another identity"

# the schema's foreign keys: a test of a run that
# does not exist is refused
ok "! SQ '$TMPD/new.db' \"PRAGMA foreign_keys = ON; INSERT INTO tests (run_id,
	test_index, name, op, dtype, nranks, status) VALUES (999, 0, 'x', 'x',
	'x', 1, 'passed')\"" "foreign keys reject a test without its run"
ok "! SQ '$TMPD/new.db' \"INSERT INTO runs (uuid, started_at, status)
	VALUES ('u', 'now', 'finished')\"" "status values are checked"

# measurements_v carries every measured column (since version 5)
missing=$(SQ "$TMPD/new.db" "SELECT name FROM pragma_table_info('measurements')
	WHERE name NOT IN ('id', 'test_id') AND name NOT IN
	(SELECT name FROM pragma_table_info('measurements_v'))")
is "$missing" "" "measurements_v has every measured column of measurements"

# tests_v's outcome finds a later attempt through an index (since version
# 9; a scan per test made a 20,000-test run take minutes to report)
like "$(SQ "$TMPD/new.db" "EXPLAIN QUERY PLAN SELECT verdict FROM tests_v
	WHERE run_id = 1")" "SEARCH u USING COVERING INDEX tests_by_attempt" \
	"tests_v asks tests_by_attempt for later attempts"

# migration from every earlier version
for old in "$top_srcdir"/test/system/data/schema_v*.sql; do
	v=$(basename "$old" .sql); v=${v#schema_v}
	SQ "$TMPD/v$v.db" < "$old"
	is "$(SQ "$TMPD/v$v.db" 'PRAGMA user_version')" "$v" "a version $v file"
	# rows written by this version's schema
	SQ "$TMPD/v$v.db" "INSERT INTO runs (uuid, started_at, status,
		exit_status) VALUES ('old-run-$v', '2025-06-01T00:00:00.000Z',
		'passed', 0);
		INSERT INTO tests (run_id, test_index, name, op, dtype, nranks,
		status) VALUES (1, 0, 'all_reduce', 'all_reduce', 'float32', 2,
		'passed');
		INSERT INTO measurements (test_id, size_bytes, count, in_place,
		iters, warmup_iters, time_us, algbw_gbs, busbw_gbs, checked)
		VALUES (1, 1024, 256, 0, 20, 5, 10.0, 1.0, 1.5, 1)"
	cp "$TMPD/v$v.db" "$TMPD/v$v-auto.db"
	run "$SHAKEDOWN" db migrate --db "$TMPD/v$v.db"
	is "$rc" 0 "db migrate from version $v: exit 0"
	is "$out" "$TMPD/v$v.db: migrated from schema version $v to $CUR" \
		"db migrate says what it did"
	is "$(shape "$TMPD/v$v.db")" "$(shape "$TMPD/new.db")" \
		"version $v migrated by db migrate has the current schema"
	is "$(SQ "$TMPD/v$v.db" "SELECT run_uuid, busbw_gbs FROM measurements_v")" \
		"old-run-$v|1.5" "version $v rows are kept"
	is "$(SQ "$TMPD/v$v.db" "SELECT run_kind FROM run_summary")" collectives \
		"version $v runs are collective runs"
	# since version 11 a verdict may be of the path a test asked for
	ok "SQ '$TMPD/v$v.db' \"INSERT INTO verdicts (run_id, test_id,
		subject_kind, subject, hosts, expectation, status, reason)
		VALUES (1, 1, 'node-pair', 'a,b', 'a,b', 'path', 'failed',
		'asked for ib')\"" "version $v migrated takes a path verdict"
	# since version 12 a test has its round, pairing and seed: NULL in
	# the rows written before
	is "$(SQ "$TMPD/v$v.db" "SELECT quote(round) || ' ' || quote(pairing)
		|| ' ' || quote(seed) FROM tests_v")" \
		"NULL NULL NULL" "version $v tests have no round, pairing or seed"
	ok "SQ '$TMPD/v$v.db' \"INSERT INTO tests (run_id, test_index, name,
		op, dtype, nranks, status, round, pairing, seed) VALUES (1, 1,
		'x', 'x', 'x', 2, 'passed', 3, 're-pair',
		'0x0000000000001234')\"" \
		"version $v migrated takes a round, pairing and seed"
	ok "! SQ '$TMPD/v$v.db' \"INSERT INTO tests (run_id, test_index, name,
		op, dtype, nranks, status, pairing) VALUES (1, 2, 'x', 'x', 'x',
		2, 'passed', 'nearest')\" 2>/dev/null" \
		"version $v migrated refuses a pairing it does not know"
	ok "! SQ '$TMPD/v$v.db' \"INSERT INTO tests (run_id, test_index, name,
		op, dtype, nranks, status, seed) VALUES (1, 2, 'x', 'x', 'x',
		2, 'passed', '4660')\" 2>/dev/null" \
		"version $v migrated refuses a seed not in hex"
	# since version 13 the database has its identity, made once
	vid=$(SQ "$TMPD/v$v.db" "SELECT value FROM meta WHERE key = 'database_uuid'")
	like "$vid" "$UUIDRE" "version $v migrated has an identity of its own"
	run "$SHAKEDOWN" db migrate --db "$TMPD/v$v.db"
	is "$out" "$TMPD/v$v.db: already at schema version $CUR" "migrating twice is a no-op"
	is "$(SQ "$TMPD/v$v.db" "SELECT value FROM meta WHERE key = 'database_uuid'")" \
		"$vid" "and migrating twice keeps it"
	# migrating on first use: a run recorded into the old file
	run "$W" -q "$TMPD/v$v-auto.db"
	is "$rc" 0 "recording into a version $v file"
	is "$(shape "$TMPD/v$v-auto.db")" "$(shape "$TMPD/new.db")" \
		"version $v migrated on first use has the current schema"
	is "$(SQ "$TMPD/v$v-auto.db" "SELECT count(*) FROM runs")" 2 \
		"the old run and the new one are both there"
done
# since version 8: the hosts of each test, from its members and the ranks
is "$(SQ "$TMPD/v7-auto.db" "SELECT count(*) > 0 FROM test_hosts_v h
	JOIN runs r ON r.id = h.run_id WHERE r.uuid <> 'old-run-7'")" 1 \
	"a run recorded after the migration from version 7 has its tests' hosts"
# the view reads members' ranges ('0-1', '2,3', one rank) and NULL (a
# run before version 3: the whole job)
SQ "$TMPD/hosts.db" <"$top_srcdir/sql/schema.sql"
SQ "$TMPD/hosts.db" "INSERT INTO runs (id, uuid, started_at, status, nranks)
	VALUES (1, 'h', 'now', 'passed', 4);
	INSERT INTO ranks (run_id, rank, host) VALUES (1, 0, 'a'), (1, 1, 'b'),
	(1, 2, 'c'), (1, 3, 'd');
	INSERT INTO tests (id, run_id, test_index, name, op, dtype, nranks,
	status, members) VALUES (1, 1, 0, 'x', 'x', 'x', 2, 'passed', '0-1'),
	(2, 1, 1, 'x', 'x', 'x', 2, 'passed', '2,3'),
	(3, 1, 2, 'x', 'x', 'x', 1, 'passed', '1'),
	(4, 1, 3, 'x', 'x', 'x', 3, 'passed', '0,2-3'),
	(5, 1, 4, 'x', 'x', 'x', 4, 'passed', NULL)"
is "$(SQ "$TMPD/hosts.db" "SELECT group_concat(test_id || host, ' ') FROM
	(SELECT test_id, host FROM test_hosts_v ORDER BY test_id, host)")" \
	"1a 1b 2c 2d 3b 4a 4c 4d 5a 5b 5c 5d" \
	"test_hosts_v: the hosts of each test's ranks, a range, a list, one rank, the whole job"

# db info on an old file does not migrate it; db check says to migrate
SQ "$TMPD/old.db" < "$top_srcdir/test/system/data/schema_v1.sql"
run "$SHAKEDOWN" db info --db "$TMPD/old.db"
like "$out" "schema_version +1 \(this shakedown: $CUR\)" "db info shows the file's version"
is "$(SQ "$TMPD/old.db" 'PRAGMA user_version')" 1 "db info leaves it at version 1"
run "$SHAKEDOWN" db check --db "$TMPD/old.db"
is "$rc" 1 "db check on an old schema: exit 1"
like "$out" "run 'shakedown db migrate'" "db check says how to fix it"
run "$SHAKEDOWN" db check --db "$TMPD/new.db"
is "$rc" 0 "db check on a good file: exit 0"
like "$out" "integrity: ok" "integrity is checked"

# a newer schema than this binary knows
cp "$TMPD/new.db" "$TMPD/newer.db"
NEWER=$((CUR + 1))
SQ "$TMPD/newer.db" "PRAGMA user_version = $NEWER"
for cmd in "report" "db migrate" "history --op all_reduce"; do
	run "$SHAKEDOWN" $cmd --db "$TMPD/newer.db"
	is "$rc" 3 "$cmd on a newer schema: exit 3"
	like "$err" "newer.db: schema version $NEWER is newer than this shakedown knows \($CUR\)" \
		"$cmd names the versions"
done
run "$W" -q "$TMPD/newer.db"
is "$rc" 3 "the recorder refuses a newer schema"
is "$(SQ "$TMPD/newer.db" 'PRAGMA user_version')" "$NEWER" "and leaves it alone"

done_testing
