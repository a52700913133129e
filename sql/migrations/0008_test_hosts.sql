-- 0008_test_hosts.sql - schema version 7 to 8: the hosts of each test,
-- the test's one number and attempt, the subject's outcome.
--
-- Every view numbers a test by its plan test (1..), and a retry of a group
-- is an attempt of it; runs recorded before have NULL here (their number
-- is test_index + 1, their attempt 1).
ALTER TABLE tests ADD COLUMN plan_test INTEGER;
ALTER TABLE tests ADD COLUMN attempt INTEGER;
-- The subject's outcome on each verdict row (sd_subject_outcome); NULL in
-- runs recorded before.
ALTER TABLE verdicts ADD COLUMN outcome TEXT
	CHECK (outcome IN ('passed', 'passed on retry', 'failed', 'skipped',
	'not judged'));
--
-- A test ran on a group of the job's ranks (tests.members, ranges such as
-- '0-3' or '4,6'; NULL in runs recorded before version 3: the whole job).
-- test_hosts_v names the hosts of those ranks, one row per test and host,
-- so that a host's figures are the figures of the tests it took part in
-- (history --host, busbw_by_host.sql, slowest_nodes.sql), not the best
-- group of a run it was in.

CREATE VIEW test_hosts_v AS
WITH RECURSIVE parts(test_id, run_id, part, rest) AS (
	SELECT t.id, t.run_id, '',
		coalesce(t.members, '0-' || (r.nranks - 1)) || ','
	FROM tests t JOIN runs r ON r.id = t.run_id
	UNION ALL
	SELECT test_id, run_id, substr(rest, 1, instr(rest, ',') - 1),
		substr(rest, instr(rest, ',') + 1)
	FROM parts WHERE rest <> ''
), spans(test_id, run_id, lo, hi) AS (
	SELECT test_id, run_id,
		CAST(iif(instr(part, '-') > 0,
			substr(part, 1, instr(part, '-') - 1), part) AS INTEGER),
		CAST(iif(instr(part, '-') > 0,
			substr(part, instr(part, '-') + 1), part) AS INTEGER)
	FROM parts WHERE part <> ''
)
SELECT DISTINCT s.test_id, s.run_id, k.host
FROM spans s
	JOIN ranks k ON k.run_id = s.run_id AND k.rank BETWEEN s.lo AND s.hi;

-- tests_v gains the test's number, attempt and outcome (the subject's, from
-- its verdicts; 'retried' for an attempt a later one of the same group
-- replaced; the measurement's status when it did not complete), and its
-- verdict says skipped and retried instead of failed.
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
	CASE o.outcome WHEN 'passed' THEN 'passed'
		WHEN 'passed on retry' THEN 'passed'
		WHEN 'not judged' THEN 'passed'
		WHEN 'skipped' THEN 'skipped'
		WHEN 'retried' THEN 'retried'
		ELSE 'failed' END AS verdict,
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
	END AS verdict_reason,
	coalesce(t.plan_test, t.test_index + 1) AS number,
	coalesce(t.attempt, 1) AS attempt,
	o.outcome
FROM tests t JOIN runs r ON r.id = t.run_id
	JOIN (SELECT t2.id,
		CASE
		WHEN t2.status NOT IN ('passed', 'failed') THEN t2.status
		WHEN EXISTS (SELECT 1 FROM tests u WHERE u.run_id = t2.run_id
			AND u.plan_test = t2.plan_test
			AND coalesce(u.members, '') = coalesce(t2.members, '')
			AND u.attempt > t2.attempt) THEN 'retried'
		WHEN EXISTS (SELECT 1 FROM verdicts v WHERE v.test_id = t2.id
			AND v.outcome IS NOT NULL) THEN
			(SELECT v.outcome FROM verdicts v WHERE v.test_id = t2.id
				AND v.outcome IS NOT NULL LIMIT 1)
		WHEN t2.status = 'failed' OR EXISTS (SELECT 1 FROM verdicts v
			WHERE v.test_id = t2.id AND v.status = 'failed')
			THEN 'failed'
		ELSE 'passed' END AS outcome
		FROM tests t2) o ON o.id = t.id;

-- run_summary counts by outcome: a test is one measured group, an attempt
-- a retry replaced is not counted, a skipped one has not passed.
DROP VIEW run_summary;
CREATE VIEW run_summary AS
SELECT r.id AS run_id,
	r.uuid,
	r.started_at,
	r.finished_at,
	round((julianday(coalesce(r.finished_at, r.heartbeat_at))
		- julianday(r.started_at)) * 86400.0, 3) AS duration_s,
	r.status,
	r.exit_status,
	r.message,
	r.backend,
	r.nranks,
	j.nnodes,
	j.nodelist,
	j.launcher,
	j.cluster,
	j.job_id,
	r.user,
	r.hostname,
	(SELECT count(*) FROM tests_v t WHERE t.run_id = r.id
		AND t.outcome <> 'retried') AS tests_total,
	(SELECT count(*) FROM tests_v t WHERE t.run_id = r.id
		AND t.verdict = 'passed') AS tests_passed,
	(SELECT count(*) FROM tests_v t WHERE t.run_id = r.id
		AND t.verdict NOT IN ('passed', 'retried')) AS tests_not_passed,
	(SELECT coalesce(sum(m.wrong), 0) FROM tests t
		JOIN measurements m ON m.test_id = t.id
		WHERE t.run_id = r.id) AS wrong_total,
	(SELECT max(m.busbw_gbs) FROM tests t
		JOIN measurements m ON m.test_id = t.id
		WHERE t.run_id = r.id) AS peak_busbw_gbs,
	r.run_kind
FROM runs r LEFT JOIN jobs j ON j.run_id = r.id;
