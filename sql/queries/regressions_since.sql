-- regressions_since.sql - per operation, data type and size: average bus
-- bandwidth of runs since a date against the runs before it, where it
-- dropped by more than 5%.  Edit the date (and threshold) in `params`.
--   sqlite3 -header -column results.db < regressions_since.sql
WITH params AS (
	SELECT date('now', '-30 days') AS since, 5.0 AS threshold_pct
), best AS (
	SELECT op, dtype, size_bytes, started_at, busbw_gbs
	FROM busbw_history WHERE run_status IN ('passed', 'failed')
), cmp AS (
	SELECT b.op, b.dtype, b.size_bytes,
		avg(iif(b.started_at < p.since, b.busbw_gbs, NULL))
			AS before_busbw_gbs,
		avg(iif(b.started_at >= p.since, b.busbw_gbs, NULL))
			AS since_busbw_gbs,
		sum(b.started_at < p.since) AS runs_before,
		sum(b.started_at >= p.since) AS runs_since
	FROM best b, params p
	GROUP BY b.op, b.dtype, b.size_bytes
)
SELECT op,
	dtype,
	size_bytes,
	runs_before,
	runs_since,
	round(before_busbw_gbs, 3) AS before_busbw_gbs,
	round(since_busbw_gbs, 3) AS since_busbw_gbs,
	round(100.0 * (since_busbw_gbs - before_busbw_gbs) / before_busbw_gbs,
		2) AS delta_pct
FROM cmp, params
WHERE before_busbw_gbs > 0 AND since_busbw_gbs IS NOT NULL
	AND since_busbw_gbs < before_busbw_gbs * (1.0 - threshold_pct / 100.0)
ORDER BY delta_pct;
