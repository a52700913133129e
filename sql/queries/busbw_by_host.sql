-- busbw_by_host.sql - per host and operation: how fast the runs that
-- included the host were, at each run's largest size.  A host whose
-- numbers sit below its peers' is the one to look at.  Only runs that
-- completed count: passed, or failed on their data or expectations (exit
-- 1 or 6); a run stopped early (lost rank, cancelled, aborted) did not
-- measure what it set out to.
--   sqlite3 -header -column results.db < busbw_by_host.sql
WITH completed AS (
	SELECT id FROM runs
	WHERE status = 'passed' OR (status = 'failed' AND exit_status IN (1, 6))
), largest AS (
	SELECT t.run_id, t.op, max(m.size_bytes) AS size_bytes
	FROM tests t JOIN measurements m ON m.test_id = t.id
	WHERE t.run_id IN (SELECT id FROM completed)
	GROUP BY t.run_id, t.op
), per_run AS (
	SELECT t.run_id, t.op, max(m.busbw_gbs) AS busbw_gbs
	FROM tests t
		JOIN measurements m ON m.test_id = t.id
		JOIN largest l ON l.run_id = t.run_id AND l.op = t.op
			AND l.size_bytes = m.size_bytes
	GROUP BY t.run_id, t.op
)
SELECT k.host,
	p.op,
	count(DISTINCT p.run_id) AS runs,
	round(avg(p.busbw_gbs), 3) AS avg_busbw_gbs,
	round(min(p.busbw_gbs), 3) AS min_busbw_gbs,
	round(max(p.busbw_gbs), 3) AS max_busbw_gbs,
	max(r.started_at) AS last_run_at
FROM per_run p
	JOIN runs r ON r.id = p.run_id
	JOIN (SELECT DISTINCT run_id, host FROM ranks) k ON k.run_id = p.run_id
GROUP BY k.host, p.op
ORDER BY p.op, avg_busbw_gbs;
