-- train_worst_runs.sql - training runs judged against a reference, the
-- largest variance of (loss - reference) first: where training behaves
-- least like the reference, with the step that differs most and the MFU.
-- Raise the LIMIT for more.
--   sqlite3 -header -column results.db < train_worst_runs.sql
SELECT started_at,
	uuid,
	run_kind,
	nodelist,
	reference_name,
	loss_steps_compared,
	loss_var,
	loss_rmse,
	loss_max_abs_diff,
	loss_max_diff_step,
	round(mfu, 4) AS mfu,
	verdict,
	verdict_reason
FROM train_summary_v
WHERE verdict IS NOT NULL
ORDER BY verdict = 'passed', loss_var IS NULL, loss_var DESC,
	started_at DESC
LIMIT 20;
