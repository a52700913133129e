-- 0004_verdicts.sql - schema version 3 -> 4.
--
-- Qualification: what each expectation of a plan found for each subject
-- (a node, a GPU pair, a node pair, a rail, a group, the job), the nodes,
-- links and paths the run blames, named baselines that later runs are
-- judged against, and the network interfaces each host reported.

CREATE TABLE verdicts (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	test_id INTEGER REFERENCES tests(id) ON DELETE CASCADE,
	subject_kind TEXT NOT NULL CHECK (subject_kind IN ('job', 'group',
		'node', 'gpu-pair', 'node-pair', 'rail')),
	subject TEXT NOT NULL,
	hosts TEXT NOT NULL,
	expectation TEXT NOT NULL CHECK (expectation IN ('data', 'busbw',
		'time', 'peers', 'mad', 'baseline', 'link')),
	size_bytes INTEGER,
	measured REAL,
	threshold REAL,
	unit TEXT,
	status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped')),
	reason TEXT,
	attempts INTEGER NOT NULL DEFAULT 1
) STRICT;
CREATE INDEX verdicts_by_run ON verdicts(run_id, status);
CREATE INDEX verdicts_by_test ON verdicts(test_id);

CREATE TABLE suspects (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	kind TEXT NOT NULL CHECK (kind IN ('node', 'link', 'path', 'rail',
		'group')),
	subject TEXT NOT NULL,
	hosts TEXT NOT NULL,
	bad_node INTEGER NOT NULL CHECK (bad_node IN (0, 1)),
	reason TEXT NOT NULL,
	PRIMARY KEY (run_id, kind, subject)
) STRICT;

CREATE TABLE baselines (
	id INTEGER PRIMARY KEY,
	name TEXT UNIQUE NOT NULL,
	created_at TEXT NOT NULL,
	from_run_uuid TEXT NOT NULL,
	description TEXT,
	backend TEXT,
	nodelist TEXT,
	nranks INTEGER
) STRICT;

CREATE TABLE baseline_values (
	baseline_id INTEGER NOT NULL REFERENCES baselines(id) ON DELETE CASCADE,
	op TEXT NOT NULL,
	dtype TEXT NOT NULL,
	redop TEXT NOT NULL DEFAULT '',
	scope TEXT NOT NULL,
	size_bytes INTEGER NOT NULL,
	in_place INTEGER NOT NULL CHECK (in_place IN (0, 1)),
	busbw_gbs REAL NOT NULL,
	time_us REAL NOT NULL,
	groups INTEGER NOT NULL,
	PRIMARY KEY (baseline_id, op, dtype, redop, scope, size_bytes, in_place)
) STRICT;

CREATE VIEW host_interfaces AS
SELECT h.run_id,
	h.host,
	json_extract(i.value, '$.name') AS name,
	json_extract(i.value, '$.state') AS state,
	json_extract(i.value, '$.speed_mbps') AS speed_mbps,
	json_extract(i.value, '$.mtu') AS mtu,
	json_extract(i.value, '$.address') AS address
FROM host_env h, json_each(h.env_json, '$.topology.interfaces') i;

DROP VIEW tests_v;
CREATE VIEW tests_v AS
SELECT t.id AS test_id,
	t.run_id,
	r.uuid AS run_uuid,
	r.started_at AS run_started_at,
	t.test_index,
	t.name,
	t.op,
	t.dtype,
	t.redop,
	t.root,
	t.scope,
	t.members,
	t.algo,
	t.nranks,
	t.status,
	t.message,
	t.started_at,
	t.finished_at,
	(SELECT count(*) FROM measurements m WHERE m.test_id = t.id)
		AS measurements,
	(SELECT max(m.busbw_gbs) FROM measurements m WHERE m.test_id = t.id)
		AS peak_busbw_gbs,
	(SELECT avg(m.busbw_gbs) FROM measurements m WHERE m.test_id = t.id)
		AS avg_busbw_gbs,
	(SELECT coalesce(sum(m.wrong), 0) FROM measurements m
		WHERE m.test_id = t.id) AS wrong,
	CASE WHEN t.status = 'passed' AND NOT EXISTS (SELECT 1 FROM verdicts v
		WHERE v.test_id = t.id AND v.status = 'failed')
	THEN 'passed' ELSE 'failed' END AS verdict,
	CASE
	WHEN t.status = 'passed' THEN (SELECT group_concat(v.reason, '; ')
		FROM verdicts v WHERE v.test_id = t.id AND v.status = 'failed')
	WHEN t.message IS NOT NULL AND t.message <> '' THEN t.message
	WHEN (SELECT sum(m.wrong) FROM measurements m
		WHERE m.test_id = t.id) > 0 THEN
		(SELECT printf('%d wrong elements; first at %d bytes, rank %d, '
			|| 'index %d: expected %s, got %s', s.total, m.size_bytes,
			m.first_wrong_rank, m.first_wrong_index,
			m.first_wrong_expected, m.first_wrong_got)
		FROM measurements m,
			(SELECT sum(wrong) AS total FROM measurements
				WHERE test_id = t.id) s
		WHERE m.test_id = t.id AND m.wrong > 0
		ORDER BY m.id LIMIT 1)
	ELSE 'test ' || t.status
	END AS verdict_reason
FROM tests t JOIN runs r ON r.id = t.run_id;
