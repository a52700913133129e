-- runs_per_day.sql - how many runs each day, and how they ended.
--   sqlite3 -header -column results.db < runs_per_day.sql
SELECT date(started_at) AS day,
	count(*) AS runs,
	sum(status = 'passed') AS passed,
	sum(status = 'failed') AS failed,
	sum(status NOT IN ('passed', 'failed')) AS other,
	round(sum(duration_s), 1) AS total_duration_s
FROM run_summary
GROUP BY day
ORDER BY day DESC;
