-- failed_runs.sql - every run that did not pass, newest first, with the
-- tests that failed and why.
--   sqlite3 -header -column results.db < failed_runs.sql
SELECT s.started_at,
	s.uuid,
	s.status,
	s.exit_status,
	s.message,
	s.nodelist,
	(SELECT group_concat(v.name || ' (' || v.dtype || '): '
		|| coalesce(v.verdict_reason, v.status), '; ')
	 FROM tests_v v WHERE v.run_id = s.run_id AND v.verdict <> 'passed')
		AS failed_tests
FROM run_summary s
WHERE s.status NOT IN ('passed', 'running')
ORDER BY s.started_at DESC;
