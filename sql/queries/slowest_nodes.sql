-- slowest_nodes.sql - hosts ranked by all_reduce bus bandwidth at the
-- largest size of each run, against the average of every host: the
-- slowest first.  A host's figure in a run is the best of the tests it
-- took part in (its groups, node pairs, rails: test_hosts_v), not the
-- run's best group, so a slow host stands out; tests of one rank count
-- not (nothing crossed a link).  Change 'all_reduce' to
-- rank by another operation.  Only runs that completed count (passed, or
-- failed on their data or expectations: exit 1 or 6), as in
-- busbw_by_host.sql.
--   sqlite3 -header -column results.db < slowest_nodes.sql
WITH per_run AS (
	SELECT t.run_id, h.host, max(m.busbw_gbs) AS busbw_gbs
	FROM tests t
		JOIN test_hosts_v h ON h.test_id = t.id
		JOIN measurements m ON m.test_id = t.id
	WHERE t.op = 'all_reduce' AND m.wrong = 0 AND t.nranks > 1
		AND t.run_id IN (SELECT id FROM runs WHERE status = 'passed'
			OR (status = 'failed' AND exit_status IN (1, 6)))
		AND m.size_bytes = (SELECT max(m2.size_bytes)
			FROM tests t2 JOIN measurements m2 ON m2.test_id = t2.id
			WHERE t2.run_id = t.run_id AND t2.op = t.op
				AND t2.nranks > 1)
	GROUP BY t.run_id, h.host
), per_host AS (
	SELECT host, count(*) AS runs, avg(busbw_gbs) AS busbw_gbs
	FROM per_run
	GROUP BY host
)
SELECT host,
	runs,
	round(busbw_gbs, 3) AS avg_busbw_gbs,
	round(100.0 * busbw_gbs / (SELECT avg(busbw_gbs) FROM per_host), 1)
		AS pct_of_all_hosts
FROM per_host
ORDER BY busbw_gbs
LIMIT 20;
