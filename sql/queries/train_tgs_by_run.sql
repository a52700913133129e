-- train_tgs_by_run.sql - every training run, newest first: tokens per
-- device per second (tgs), achieved TFLOPs and MFU recomputed here from
-- its step rows (timed rows only, each weighted by the steps it stands
-- for: total tokens / total time / devices), beside the values recorded.
--   sqlite3 -header -column results.db < train_tgs_by_run.sql
WITH timed AS (
	SELECT s.run_id,
		count(*) AS timed_rows,
		sum(s.span_steps) AS timed_steps,
		sum(coalesce(s.tokens, t.tokens_per_step) * s.span_steps)
			AS tokens,
		sum(s.step_s * s.span_steps) AS seconds
	FROM train_steps s JOIN train_runs t ON t.run_id = s.run_id
	WHERE s.rank IS NULL AND s.timed = 1
	GROUP BY s.run_id
)
SELECT v.started_at,
	v.uuid,
	v.run_kind,
	v.status,
	v.device_name,
	v.devices,
	m.timed_steps,
	round(m.tokens / m.seconds / v.devices, 1) AS tgs,
	round(v.tgs, 1) AS recorded_tgs,
	round(t.flops_per_token * m.tokens / m.seconds / v.devices / 1e12, 3)
		AS tflops,
	round(t.flops_per_token * m.tokens / m.seconds / v.devices / 1e12
		/ t.peak_tflops, 4) AS mfu,
	round(v.mfu, 4) AS recorded_mfu
FROM train_summary_v v
	JOIN train_runs t ON t.run_id = v.run_id
	LEFT JOIN timed m ON m.run_id = v.run_id
ORDER BY v.started_at DESC, v.run_id DESC;
