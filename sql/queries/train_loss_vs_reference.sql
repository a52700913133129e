-- train_loss_vs_reference.sql - the loss of every step of one training
-- run beside its reference: the difference, the relative difference and
-- whether the step is inside the per-step tolerance the run was judged
-- with.  The latest training run; put a UUID (or its first characters)
-- in `params` for another.
--   sqlite3 -header -column results.db < train_loss_vs_reference.sql
WITH params AS (
	SELECT '' AS run_uuid_prefix
), run AS (
	SELECT r.id, r.uuid
	FROM runs r JOIN train_runs t ON t.run_id = r.id, params p
	WHERE p.run_uuid_prefix = ''
		OR substr(r.uuid, 1, length(p.run_uuid_prefix))
			= p.run_uuid_prefix
	ORDER BY r.started_at DESC, r.id DESC
	LIMIT 1
)
SELECT l.run_uuid,
	l.step,
	l.loss,
	l.loss_nonfinite,
	l.reference_name,
	l.ref_loss_mean,
	l.ref_loss_spread,
	l.loss_diff,
	round(l.loss_rel_diff, 6) AS loss_rel_diff,
	CASE WHEN l.ref_loss_mean IS NULL OR t.rel_tol IS NULL THEN NULL
	WHEN abs(l.loss_diff) <= coalesce(t.abs_tol, 0)
		+ t.rel_tol * abs(l.ref_loss_mean) THEN 1 ELSE 0 END
		AS within_tol
FROM train_loss_v l
	JOIN run ON run.id = l.run_id
	JOIN train_runs t ON t.run_id = l.run_id
ORDER BY l.step;
