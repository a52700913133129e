-- 0012_pairs.sql - schema version 11 to 12: the round and the pairing of
-- each test.
--
-- A scope's schedule runs its groups in rounds, and node-pairs:adaptive
-- chooses each node pair one way or another (disjoint, random, re-pair,
-- fill, retry), drawn with a seed; tests.round, tests.pairing and
-- tests.seed say which, so that the pairs and rounds of a run read back
-- with sqlite3.  Tests recorded before have NULL in all three.
ALTER TABLE tests ADD COLUMN round INTEGER;
ALTER TABLE tests ADD COLUMN pairing TEXT
	CHECK (pairing IN ('disjoint', 'random', 're-pair', 'fill',
	'retry'));
ALTER TABLE tests ADD COLUMN seed TEXT
	CHECK (length(seed) = 18 AND seed GLOB '0x*'
	AND substr(seed, 3) NOT GLOB '*[^0-9a-f]*');
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
	o.outcome,
	t.variant,
	t.round,
	t.pairing,
	t.seed
FROM tests t JOIN runs r ON r.id = t.run_id
	JOIN (SELECT t2.id,
		CASE
		WHEN t2.status NOT IN ('passed', 'failed') THEN t2.status
		WHEN EXISTS (SELECT 1 FROM tests u WHERE u.run_id = t2.run_id
			AND u.plan_test = t2.plan_test
			AND u.members IS t2.members
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
