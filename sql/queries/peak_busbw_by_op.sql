-- peak_busbw_by_op.sql - the best bus bandwidth ever measured per
-- operation and data type, with the size and run where it was reached,
-- among the runs that did not fail (a failed run's numbers may be what
-- made it fail) and the measurements with no wrong data.
--   sqlite3 -header -column results.db < peak_busbw_by_op.sql
SELECT op,
	dtype,
	max(busbw_gbs) AS peak_busbw_gbs, -- the bare columns below come
	size_bytes,                       -- from the row holding the max
	nranks,
	nodelist,
	run_uuid,
	run_started_at,
	count(DISTINCT run_uuid) AS runs
FROM measurements_v
WHERE wrong = 0 AND run_status NOT IN ('failed', 'error', 'aborted', 'running')
GROUP BY op, dtype
ORDER BY op, dtype;
