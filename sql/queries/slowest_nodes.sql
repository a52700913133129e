-- slowest_nodes.sql - hosts ranked by all_reduce bus bandwidth at the
-- largest size of each run, against the average of every host: the
-- slowest first.  Change 'all_reduce' to rank by another operation.
-- Only runs that completed count (passed, or failed on their data or
-- expectations: exit 1 or 6), as in busbw_by_host.sql.
--   sqlite3 -header -column results.db < slowest_nodes.sql
WITH per_run AS (
	SELECT t.run_id, max(m.busbw_gbs) AS busbw_gbs
	FROM tests t JOIN measurements m ON m.test_id = t.id
	WHERE t.op = 'all_reduce' AND m.wrong = 0
		AND t.run_id IN (SELECT id FROM runs WHERE status = 'passed'
			OR (status = 'failed' AND exit_status IN (1, 6)))
		AND m.size_bytes = (SELECT max(m2.size_bytes)
			FROM tests t2 JOIN measurements m2 ON m2.test_id = t2.id
			WHERE t2.run_id = t.run_id AND t2.op = t.op)
	GROUP BY t.run_id
), per_host AS (
	SELECT k.host, count(*) AS runs, avg(p.busbw_gbs) AS busbw_gbs
	FROM per_run p
		JOIN (SELECT DISTINCT run_id, host FROM ranks) k
			ON k.run_id = p.run_id
	GROUP BY k.host
)
SELECT host,
	runs,
	round(busbw_gbs, 3) AS avg_busbw_gbs,
	round(100.0 * busbw_gbs / (SELECT avg(busbw_gbs) FROM per_host), 1)
		AS pct_of_all_hosts
FROM per_host
ORDER BY busbw_gbs
LIMIT 20;
