-- 0011_path.sql - schema version 10 to 11: the path expectation.
--
-- A test that asks for a transport (or, under Gloo, an iface) has its
-- path proved (shakedown-plan(5), PROOF OF THE PATH): each subject gets a
-- verdict of expectation 'path', which the CHECK of verdicts.expectation
-- must take.  SQLite cannot change a CHECK in place, so the table is made
-- again and its rows copied.  legacy_alter_table keeps the views that read
-- verdicts (tests_v) naming "verdicts" while the old table is moved aside.
PRAGMA legacy_alter_table = ON;
ALTER TABLE verdicts RENAME TO verdicts_v10;
CREATE TABLE verdicts (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	test_id INTEGER REFERENCES tests(id) ON DELETE CASCADE,
	subject_kind TEXT NOT NULL CHECK (subject_kind IN ('job', 'group',
		'node', 'gpu-pair', 'node-pair', 'rail')),
	subject TEXT NOT NULL,
	hosts TEXT NOT NULL,
	expectation TEXT NOT NULL CHECK (expectation IN ('data', 'busbw',
		'time', 'peers', 'mad', 'baseline', 'link', 'path')),
	size_bytes INTEGER,
	measured REAL,
	threshold REAL,
	unit TEXT,
	status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped')),
	reason TEXT,
	attempts INTEGER NOT NULL DEFAULT 1,
	outcome TEXT                 -- since version 8: the subject's outcome,
	                             -- the same on each of its rows: passed,
	                             -- passed on retry, failed, skipped, not
	                             -- judged
		CHECK (outcome IN ('passed', 'passed on retry', 'failed',
		'skipped', 'not judged'))
) STRICT;
INSERT INTO verdicts (id, run_id, test_id, subject_kind, subject, hosts, expectation, size_bytes, measured, threshold, unit, status, reason, attempts, outcome)
	SELECT id, run_id, test_id, subject_kind, subject, hosts, expectation, size_bytes, measured, threshold, unit, status, reason, attempts, outcome FROM verdicts_v10;
DROP TABLE verdicts_v10;
CREATE INDEX verdicts_by_run ON verdicts(run_id, status);
CREATE INDEX verdicts_by_test ON verdicts(test_id);
PRAGMA legacy_alter_table = OFF;
