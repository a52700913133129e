-- 0002_history.sql - schema version 1 -> 2.
--
-- History queries (`shakedown history`, sql/queries/) select tests by
-- operation and data type across many runs: index them, and add the
-- busbw_history view those queries read.

CREATE INDEX tests_by_op ON tests(op, dtype, run_id);

-- The best bus bandwidth of each run per operation, data
-- type and size (in or out of place), for history over time.
CREATE VIEW busbw_history AS
SELECT r.uuid AS run_uuid,
	r.started_at,
	r.status AS run_status,
	j.nodelist,
	j.nnodes,
	r.nranks,
	t.op,
	t.dtype,
	m.size_bytes,
	max(m.busbw_gbs) AS busbw_gbs,
	min(m.time_us) AS time_us,
	sum(m.wrong) AS wrong
FROM runs r
	JOIN tests t ON t.run_id = r.id
	JOIN measurements m ON m.test_id = t.id
	LEFT JOIN jobs j ON j.run_id = r.id
GROUP BY r.id, t.op, t.dtype, m.size_bytes;

