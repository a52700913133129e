-- 0010_variant.sql - schema version 9 to 10: the path a test ran.
--
-- A plan's test may ask for a path of its own (transport, iface,
-- process_env: shakedown-plan(5), TRANSPORT VARIANTS) and then runs in
-- worker processes; tests.variant names it ('tcp eth1'), NULL for a test
-- in the rank's own process and in runs recorded before.
ALTER TABLE tests ADD COLUMN variant TEXT;
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
	t.variant
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
