-- busbw_by_host.sql - per host and operation: how fast the host's own
-- tests were (the groups, node pairs and rails it took part in:
-- test_hosts_v), at each run's largest size.  Per run a host's figure is
-- the best of its tests, so a host whose every partner measured slow shows
-- slow although other groups of the same run were fast; the host whose
-- numbers sit below its peers' is the one to look at.  Tests of one rank
-- count not: nothing crossed a link (their bus bandwidth is 0).  Only runs that
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
	WHERE t.run_id IN (SELECT id FROM completed) AND t.nranks > 1
	GROUP BY t.run_id, t.op
), per_run AS (
	SELECT t.run_id, h.host, t.op, max(m.busbw_gbs) AS busbw_gbs
	FROM tests t
		JOIN test_hosts_v h ON h.test_id = t.id
		JOIN measurements m ON m.test_id = t.id
		JOIN largest l ON l.run_id = t.run_id AND l.op = t.op
			AND l.size_bytes = m.size_bytes
	WHERE t.nranks > 1
	GROUP BY t.run_id, h.host, t.op
)
SELECT p.host,
	p.op,
	count(DISTINCT p.run_id) AS runs,
	round(avg(p.busbw_gbs), 3) AS avg_busbw_gbs,
	round(min(p.busbw_gbs), 3) AS min_busbw_gbs,
	round(max(p.busbw_gbs), 3) AS max_busbw_gbs,
	max(r.started_at) AS last_run_at
FROM per_run p
	JOIN runs r ON r.id = p.run_id
GROUP BY p.host, p.op
ORDER BY p.op, avg_busbw_gbs;
