-- 0006_training.sql - schema version 5 -> 6.
--
-- Training runs: the built-in fine-tuning workload (`shakedown train`)
-- and ingested training logs (`shakedown ingest`) are runs too, told
-- apart by runs.run_kind (not `kind`: suspects has one, and queries
-- that join the two name it bare), with their facts, every step's loss and time,
-- their metric rows (tgs, TFLOPs, MFU, the loss against a reference) and
-- the named reference curves they are judged against.  Runs recorded
-- before are collective runs.

ALTER TABLE runs ADD COLUMN run_kind TEXT NOT NULL DEFAULT 'collectives'
	CHECK (run_kind IN ('collectives', 'gemm', 'train', 'ingest'));

-- Named reference loss curves (`shakedown reference create`, import).
CREATE TABLE train_references (
	id INTEGER PRIMARY KEY,
	name TEXT UNIQUE NOT NULL,
	created_at TEXT NOT NULL,
	description TEXT,
	config TEXT NOT NULL,        -- the workload config it belongs to
	source TEXT NOT NULL,        -- runs, logs or the file it came from
	curves INTEGER NOT NULL      -- how many curves it was made from
) STRICT;

-- One row per step of a reference: the mean loss over its curves.
CREATE TABLE train_reference_steps (
	reference_id INTEGER NOT NULL
		REFERENCES train_references(id) ON DELETE CASCADE,
	step INTEGER NOT NULL,
	loss_mean REAL NOT NULL,
	loss_spread REAL NOT NULL,   -- sample standard deviation; 0 for one
	curves INTEGER NOT NULL,
	PRIMARY KEY (reference_id, step)
) STRICT;

-- One row per training run: its facts (NULL: unknown), where each came
-- from, the reference it was judged against and the verdict.
CREATE TABLE train_runs (
	run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	config TEXT NOT NULL,        -- the workload's identity
	log_path TEXT,               -- ingest: the log read
	log_format TEXT,             -- ingest: megatron, deepspeed, hf, ...
	lines_unparsed INTEGER,      -- ingest: lines that did not parse
	device_name TEXT,
	devices INTEGER,
	seq_len INTEGER,
	tokens_per_step REAL,
	params REAL,
	layers INTEGER,
	width INTEGER,
	flops_per_token REAL,        -- as used: the override or the formula
	warmup_steps INTEGER,
	precision TEXT,              -- of the peak: bf16, fp16, tf32, fp8, fp32
	peak_tflops REAL,            -- as used
	peak_part TEXT,              -- the peak table's part, when from it
	fact_origins TEXT NOT NULL DEFAULT '{}'
		CHECK (json_valid(fact_origins)),
	reference_name TEXT,
	reference_id INTEGER REFERENCES train_references(id)
		ON DELETE SET NULL,
	rel_tol REAL,
	abs_tol REAL,
	var_tol REAL,
	verdict TEXT CHECK (verdict IN ('passed', 'failed', 'nonfinite')),
	verdict_reason TEXT,
	nonfinite_step INTEGER
) STRICT;

-- Every recorded step (a logged row stands for span_steps steps).
CREATE TABLE train_steps (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	step INTEGER NOT NULL,
	rank INTEGER,                -- NULL: the job's step
	span_steps INTEGER,          -- steps since the previous row; NULL first
	loss REAL,                   -- NULL: not logged, or not finite
	loss_nonfinite TEXT          -- the loss when not finite
		CHECK (loss_nonfinite IN ('nan', 'inf', '-inf')),
	step_s REAL,
	tokens REAL,
	compute_s REAL,
	comm_s REAL,
	optim_s REAL,
	timed INTEGER NOT NULL CHECK (timed IN (0, 1))
) STRICT;
CREATE UNIQUE INDEX train_steps_by_run
	ON train_steps(run_id, step, coalesce(rank, -1));

-- The metrics of a training run, of the job (host and rank NULL) or of
-- one host or rank.
CREATE TABLE train_metrics (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	unit TEXT,
	value REAL NOT NULL,
	host TEXT,
	rank INTEGER
) STRICT;
CREATE UNIQUE INDEX train_metrics_by_run
	ON train_metrics(run_id, name, coalesce(host, ''), coalesce(rank, -1));
CREATE INDEX train_metrics_by_name ON train_metrics(name, run_id);

DROP VIEW run_summary;
-- One line per run, newest questions first: what ran, where, the outcome;
-- since version 6 with the run's kind (run_kind).
CREATE VIEW run_summary AS
SELECT r.id AS run_id,
	r.uuid,
	r.started_at,
	r.finished_at,
	round((julianday(coalesce(r.finished_at, r.heartbeat_at))
		- julianday(r.started_at)) * 86400.0, 3) AS duration_s,
	r.status,
	r.exit_status,
	r.message,
	r.backend,
	r.nranks,
	j.nnodes,
	j.nodelist,
	j.launcher,
	j.cluster,
	j.job_id,
	r.user,
	r.hostname,
	(SELECT count(*) FROM tests t WHERE t.run_id = r.id) AS tests_total,
	(SELECT count(*) FROM tests t WHERE t.run_id = r.id
		AND t.status = 'passed') AS tests_passed,
	(SELECT count(*) FROM tests t WHERE t.run_id = r.id
		AND t.status <> 'passed') AS tests_not_passed,
	(SELECT coalesce(sum(m.wrong), 0) FROM tests t
		JOIN measurements m ON m.test_id = t.id
		WHERE t.run_id = r.id) AS wrong_total,
	(SELECT max(m.busbw_gbs) FROM tests t
		JOIN measurements m ON m.test_id = t.id
		WHERE t.run_id = r.id) AS peak_busbw_gbs,
	r.run_kind
FROM runs r LEFT JOIN jobs j ON j.run_id = r.id;

-- One line per training run: its facts, the job's metrics and verdict.
CREATE VIEW train_summary_v AS
SELECT r.id AS run_id,
	r.uuid,
	r.run_kind,
	r.started_at,
	r.finished_at,
	r.status,
	r.exit_status,
	r.message,
	r.hostname,
	j.nodelist,
	j.nnodes,
	t.config,
	t.log_path,
	t.log_format,
	t.lines_unparsed,
	t.device_name,
	t.devices,
	t.precision,
	(SELECT count(*) FROM train_steps s WHERE s.run_id = r.id
		AND s.rank IS NULL) AS steps,
	(SELECT max(s.step) FROM train_steps s WHERE s.run_id = r.id
		AND s.rank IS NULL) AS last_step,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'tgs' AND m.host IS NULL AND m.rank IS NULL)
		AS tgs,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'tflops' AND m.host IS NULL AND m.rank IS NULL)
		AS tflops,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'mfu' AND m.host IS NULL AND m.rank IS NULL)
		AS mfu,
	t.peak_tflops,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'step_s_median' AND m.host IS NULL
		AND m.rank IS NULL) AS step_s_median,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'comm_share' AND m.host IS NULL
		AND m.rank IS NULL) AS comm_share,
	t.reference_name,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'loss_steps_compared' AND m.host IS NULL
		AND m.rank IS NULL) AS loss_steps_compared,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'loss_var' AND m.host IS NULL AND m.rank IS NULL)
		AS loss_var,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'loss_rmse' AND m.host IS NULL AND m.rank IS NULL)
		AS loss_rmse,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'loss_max_abs_diff' AND m.host IS NULL
		AND m.rank IS NULL) AS loss_max_abs_diff,
	(SELECT m.value FROM train_metrics m WHERE m.run_id = r.id
		AND m.name = 'loss_max_diff_step' AND m.host IS NULL
		AND m.rank IS NULL) AS loss_max_diff_step,
	t.verdict,
	t.verdict_reason
FROM runs r
	JOIN train_runs t ON t.run_id = r.id
	LEFT JOIN jobs j ON j.run_id = r.id;

-- Every step of the job of each training run beside its reference's
-- step (NULL where the reference has none or was deleted).
CREATE VIEW train_loss_v AS
SELECT s.run_id,
	r.uuid AS run_uuid,
	s.step,
	s.loss,
	s.loss_nonfinite,
	s.step_s,
	s.tokens,
	t.reference_name,
	p.loss_mean AS ref_loss_mean,
	p.loss_spread AS ref_loss_spread,
	s.loss - p.loss_mean AS loss_diff,
	abs(s.loss - p.loss_mean) / nullif(abs(p.loss_mean), 0.0)
		AS loss_rel_diff
FROM train_steps s
	JOIN runs r ON r.id = s.run_id
	JOIN train_runs t ON t.run_id = s.run_id
	LEFT JOIN train_reference_steps p ON p.reference_id = t.reference_id
		AND p.step = s.step
WHERE s.rank IS NULL;
