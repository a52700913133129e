-- schema.sql - the shakedown results database, current version.
--
-- One SQLite file is the system of record for every run: rank 0 of
-- `shakedown run` writes it (src/db/sink_db.c), `shakedown report`,
-- `history`, `compare` and `db` read it, and operators query it with
-- sqlite3.  This file creates a new database at the current version; an
-- older database is brought forward by the steps in sql/migrations/, and
-- PRAGMA user_version says which version a file holds.  Every table and
-- column is documented in shakedown-db(5).
--
-- Conventions: times are ISO 8601 UTC text ("2026-01-31T12:00:00.000Z"),
-- units are in column names (size_bytes, time_us, busbw_gbs), tables are
-- STRICT, rows of a run are deleted with the run (ON DELETE CASCADE).

PRAGMA application_id = 1396982338; -- 0x53444242, "SDBB"

-- One row per `shakedown run`, `gemm`, `train` or `ingest`.
CREATE TABLE runs (
	id INTEGER PRIMARY KEY,
	uuid TEXT UNIQUE NOT NULL,
	started_at TEXT NOT NULL,
	finished_at TEXT,
	heartbeat_at TEXT,
	status TEXT NOT NULL CHECK (status IN ('running', 'passed', 'failed',
		'error', 'cancelled', 'aborted')),
	exit_status INTEGER,
	message TEXT,
	command_line TEXT,
	plan_text TEXT,
	plan_hash TEXT,
	tool_version TEXT,
	backend TEXT,
	backend_version TEXT,
	user TEXT,
	hostname TEXT,               -- host of rank 0 (the writer)
	pid INTEGER,                 -- process id of rank 0
	nranks INTEGER,
	run_kind TEXT NOT NULL DEFAULT 'collectives'
		CHECK (run_kind IN ('collectives', 'gemm', 'train', 'ingest'))
	                             -- since version 6: shakedown run,
	                             -- train, or an ingested training log
) STRICT;
CREATE INDEX runs_by_started_at ON runs(started_at);
CREATE INDEX runs_by_status ON runs(status);

-- How the run was launched: one row per run.
CREATE TABLE jobs (
	run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	launcher TEXT,               -- local, srun, single
	cluster TEXT,
	job_id TEXT,
	step_id TEXT,
	nodelist TEXT,               -- Slurm hostlist, e.g. node[01-04]
	nnodes INTEGER,
	tasks_per_node INTEGER
) STRICT;

-- Every rank of a run and the device it used.
CREATE TABLE ranks (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	host TEXT NOT NULL,
	local_rank INTEGER,
	pid INTEGER,
	device_name TEXT,
	pci_bus_id TEXT,
	device_uuid TEXT,
	mem_total_bytes INTEGER,
	mem_free_bytes INTEGER,
	transport TEXT,
	PRIMARY KEY (run_id, rank)
) STRICT;
CREATE INDEX ranks_by_host ON ranks(host, run_id);

-- The software fingerprint of each host: kernel, driver and library
-- versions, NCCL_*, CUDA_VISIBLE_DEVICES and SHAKEDOWN_* variables.
CREATE TABLE host_env (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	host TEXT NOT NULL,
	env_json TEXT NOT NULL CHECK (json_valid(env_json)),
	PRIMARY KEY (run_id, host)
) STRICT;

-- One row per test of a run (an operation, data type, operator, root and
-- scope, measured over a range of sizes).
CREATE TABLE tests (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	test_index INTEGER NOT NULL,
	name TEXT NOT NULL,
	op TEXT NOT NULL,
	dtype TEXT NOT NULL,
	redop TEXT,                  -- NULL when the op does not reduce
	root INTEGER,                -- NULL when the op has no root
	scope TEXT NOT NULL DEFAULT 'world',
	algo TEXT,
	nranks INTEGER NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'error',
		'skipped', 'cancelled')),
	message TEXT,
	started_at TEXT,
	finished_at TEXT,
	members TEXT,                -- since version 3: the world ranks of the
	                             -- group that ran it, as ranges ('0-3')
	plan_test INTEGER,           -- since version 8: the test's one number,
	                             -- its plan test (1..), the same in every
	                             -- view; NULL before (test_index + 1)
	attempt INTEGER,             -- since version 8: 1, or 2.. for a retry
	                             -- of the group
	variant TEXT,                -- since version 10: the path it ran in
	                             -- processes of its own ('tcp eth1',
	                             -- 'nvlink', 'process_env'); NULL: the
	                             -- rank's own process
	round INTEGER,               -- since version 12: the round of its
	                             -- scope's schedule it ran in (1..); NULL:
	                             -- not said (made by hand, a bisection)
	pairing TEXT                 -- since version 12: how its node pair was
	                             -- chosen (node-pairs:adaptive); NULL: not
	                             -- chosen so
		CHECK (pairing IN ('disjoint', 'random', 're-pair', 'fill',
		'retry')),
	seed TEXT                    -- since version 12: the seed its pairs
	                             -- were drawn with (node-pairs:random:K,
	                             -- node-pairs:adaptive), its 64 bits as 16
	                             -- hex digits ('0x00000000000004d2'), so
	                             -- that it reads back exactly; NULL: none
		CHECK (length(seed) = 18 AND seed GLOB '0x*'
		AND substr(seed, 3) NOT GLOB '*[^0-9a-f]*'),
	UNIQUE (run_id, test_index)
) STRICT;

-- One row per size and placement of a test.
CREATE TABLE measurements (
	id INTEGER PRIMARY KEY,
	test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
	size_bytes INTEGER NOT NULL,
	count INTEGER NOT NULL,
	in_place INTEGER NOT NULL CHECK (in_place IN (0, 1)),
	iters INTEGER NOT NULL,
	warmup_iters INTEGER NOT NULL,
	time_us REAL NOT NULL,
	time_us_min REAL,
	time_us_avg REAL,
	time_us_max REAL,
	iter_us_min REAL,            -- percentiles: NULL unless --per-iter
	iter_us_p50 REAL,
	iter_us_p99 REAL,
	iter_us_max REAL,
	algbw_gbs REAL NOT NULL,
	busbw_gbs REAL NOT NULL,
	ds_size_bytes INTEGER,
	ds_description TEXT,
	ds_throughput_gbps REAL,
	ds_busbw_gbps REAL,
	checked INTEGER NOT NULL CHECK (checked IN (0, 1)),
	wrong INTEGER NOT NULL DEFAULT 0,
	first_wrong_rank INTEGER,    -- NULL when nothing was wrong
	first_wrong_index INTEGER,
	first_wrong_expected TEXT,
	first_wrong_got TEXT,
	algo TEXT
) STRICT;
CREATE INDEX measurements_by_test ON measurements(test_id, size_bytes);

-- Reports waiting to be uploaded, and what became of them (upload work).
CREATE TABLE upload_outbox (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id),
	url TEXT NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
	attempts INTEGER NOT NULL DEFAULT 0,
	http_status INTEGER,
	last_error TEXT,
	created_at TEXT NOT NULL,
	last_attempt_at TEXT,
	sent_at TEXT,
	UNIQUE (run_id, url)
) STRICT;

-- Since version 2: history questions ask by operation and data type.
CREATE INDEX tests_by_op ON tests(op, dtype, run_id);
-- Since version 9: a test's attempts, found from any of them (tests_v's
-- outcome asks whether a later attempt of the same group exists).
CREATE INDEX tests_by_attempt ON tests(run_id, plan_test, members, attempt);

-- Since version 4: what each expectation of a plan found, per subject (a
-- node, GPU pair, node pair, rail, group or the job) and test; the last
-- attempt of each (a failed expectation is measured again `retries` times).
CREATE TABLE verdicts (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	test_id INTEGER REFERENCES tests(id) ON DELETE CASCADE,
	subject_kind TEXT NOT NULL CHECK (subject_kind IN ('job', 'group',
		'node', 'gpu-pair', 'node-pair', 'rail')),
	subject TEXT NOT NULL,
	hosts TEXT NOT NULL,
	expectation TEXT NOT NULL CHECK (expectation IN ('data', 'busbw',
		'time', 'peers', 'mad', 'baseline', 'link', 'path')),
	size_bytes INTEGER,
	measured REAL,
	threshold REAL,
	unit TEXT,
	status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped')),
	reason TEXT,
	attempts INTEGER NOT NULL DEFAULT 1,
	outcome TEXT                 -- since version 8: the subject's outcome,
	                             -- the same on each of its rows: passed,
	                             -- passed on retry, failed, skipped, not
	                             -- judged
		CHECK (outcome IN ('passed', 'passed on retry', 'failed',
		'skipped', 'not judged'))
) STRICT;
CREATE INDEX verdicts_by_run ON verdicts(run_id, status);
CREATE INDEX verdicts_by_test ON verdicts(test_id);

-- Since version 4: what the run blames: nodes (bad_node = 1: in the
-- `report --bad-nodes` hostlist), GPU links, network paths, rails, groups.
CREATE TABLE suspects (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	kind TEXT NOT NULL CHECK (kind IN ('node', 'link', 'path', 'rail',
		'group')),
	subject TEXT NOT NULL,
	hosts TEXT NOT NULL,
	bad_node INTEGER NOT NULL CHECK (bad_node IN (0, 1)),
	reason TEXT NOT NULL,
	PRIMARY KEY (run_id, kind, subject)
) STRICT;

-- Since version 4: named baselines (`shakedown baseline create`), the
-- median bus bandwidth and time of a run per test kind and size.
CREATE TABLE baselines (
	id INTEGER PRIMARY KEY,
	name TEXT UNIQUE NOT NULL,
	created_at TEXT NOT NULL,
	from_run_uuid TEXT NOT NULL,
	description TEXT,
	backend TEXT,
	nodelist TEXT,
	nranks INTEGER
) STRICT;

CREATE TABLE baseline_values (
	baseline_id INTEGER NOT NULL REFERENCES baselines(id) ON DELETE CASCADE,
	op TEXT NOT NULL,
	dtype TEXT NOT NULL,
	redop TEXT NOT NULL DEFAULT '',
	scope TEXT NOT NULL,
	size_bytes INTEGER NOT NULL,
	in_place INTEGER NOT NULL CHECK (in_place IN (0, 1)),
	busbw_gbs REAL NOT NULL,
	time_us REAL NOT NULL,
	groups INTEGER NOT NULL,
	PRIMARY KEY (baseline_id, op, dtype, redop, scope, size_bytes, in_place)
) STRICT;

-- Since version 6: named reference loss curves (`shakedown reference
-- create`, import).
CREATE TABLE train_references (
	id INTEGER PRIMARY KEY,
	name TEXT UNIQUE NOT NULL,
	created_at TEXT NOT NULL,
	description TEXT,
	config TEXT NOT NULL,        -- the workload config it belongs to
	source TEXT NOT NULL,        -- runs, logs or the file it came from
	curves INTEGER NOT NULL      -- how many curves it was made from
) STRICT;

-- Since version 6: one row per step of a reference: the mean loss over
-- its curves.
CREATE TABLE train_reference_steps (
	reference_id INTEGER NOT NULL
		REFERENCES train_references(id) ON DELETE CASCADE,
	step INTEGER NOT NULL,
	loss_mean REAL NOT NULL,
	loss_spread REAL NOT NULL,   -- sample standard deviation; 0 for one
	curves INTEGER NOT NULL,
	PRIMARY KEY (reference_id, step)
) STRICT;

-- Since version 6: one row per training run: its facts (NULL: unknown),
-- where each came from, the reference it was judged against and the
-- verdict.
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

-- Since version 6: every recorded step of a training run (a logged row
-- stands for span_steps steps).
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

-- Since version 6: the metrics of a training run, of the job (host and
-- rank NULL) or of one host or rank.
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


-- Since version 7: one row per rank, type and shape of a `shakedown gemm`
-- run's sweep (a gemm run is a row of runs like any other).
CREATE TABLE gemm_results (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	host TEXT NOT NULL,
	device TEXT,                 -- as the backend names it
	dtype TEXT NOT NULL,         -- fp32, tf32, bf16, fp16, fp8
	shape TEXT NOT NULL,         -- square, qkv, fc, proj
	m INTEGER NOT NULL,          -- C (m x n) = A (m x k) B (k x n)
	n INTEGER NOT NULL,
	k INTEGER NOT NULL,
	iters INTEGER NOT NULL,
	warmup_iters INTEGER NOT NULL,
	time_us REAL NOT NULL,       -- median of the timed calls
	time_us_min REAL,
	time_us_max REAL,
	tflops REAL NOT NULL,        -- 2 m n k / time
	checked INTEGER NOT NULL,    -- elements compared with the reference
	wrong INTEGER NOT NULL DEFAULT 0,
	max_error REAL,              -- largest |C - ref| / scale
	tolerance REAL,
	best INTEGER NOT NULL CHECK (best IN (0, 1)),
	impl TEXT
) STRICT;
CREATE INDEX gemm_results_by_run ON gemm_results(run_id, rank);

-- Since version 7: one row per rank and type of a gemm run: the device's
-- verdict.
CREATE TABLE gemm_devices (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	host TEXT NOT NULL,
	device TEXT,
	dtype TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped')),
	best_tflops REAL,            -- NULL when the type did not run there
	best_shape TEXT,             -- 'square 2048x2048x2048'
	peer_median_tflops REAL,     -- NULL without peers
	peers INTEGER,
	peak_tflops REAL,            -- NULL when unknown
	reason TEXT,
	PRIMARY KEY (run_id, rank, dtype)
) STRICT;
CREATE INDEX gemm_devices_by_host ON gemm_devices(host, run_id);


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
	(SELECT count(*) FROM tests_v t WHERE t.run_id = r.id
		AND t.outcome <> 'retried') AS tests_total,
	(SELECT count(*) FROM tests_v t WHERE t.run_id = r.id
		AND t.verdict = 'passed') AS tests_passed,
	(SELECT count(*) FROM tests_v t WHERE t.run_id = r.id
		AND t.verdict NOT IN ('passed', 'retried')) AS tests_not_passed,
	(SELECT coalesce(sum(m.wrong), 0) FROM tests t
		JOIN measurements m ON m.test_id = t.id
		WHERE t.run_id = r.id) AS wrong_total,
	(SELECT max(m.busbw_gbs) FROM tests t
		JOIN measurements m ON m.test_id = t.id
		WHERE t.run_id = r.id) AS peak_busbw_gbs,
	r.run_kind
FROM runs r LEFT JOIN jobs j ON j.run_id = r.id;

-- Every test with its verdict and the reason for it; since version 8
-- with its number (its plan test), attempt and outcome; since version 10
-- with its variant (the path it ran); since version 12 with its round,
-- pairing and seed.
CREATE VIEW tests_v AS
SELECT t.id AS test_id,
	t.run_id,
	r.uuid AS run_uuid,
	r.started_at AS run_started_at,
	t.test_index,
	t.name,
	t.op,
	t.dtype,
	t.redop,
	t.root,
	t.scope,
	t.members,
	t.algo,
	t.nranks,
	t.status,
	t.message,
	t.started_at,
	t.finished_at,
	(SELECT count(*) FROM measurements m WHERE m.test_id = t.id)
		AS measurements,
	(SELECT max(m.busbw_gbs) FROM measurements m WHERE m.test_id = t.id)
		AS peak_busbw_gbs,
	(SELECT avg(m.busbw_gbs) FROM measurements m WHERE m.test_id = t.id)
		AS avg_busbw_gbs,
	(SELECT coalesce(sum(m.wrong), 0) FROM measurements m
		WHERE m.test_id = t.id) AS wrong,
	CASE o.outcome WHEN 'passed' THEN 'passed'
		WHEN 'passed on retry' THEN 'passed'
		WHEN 'not judged' THEN 'passed'
		WHEN 'skipped' THEN 'skipped'
		WHEN 'retried' THEN 'retried'
		ELSE 'failed' END AS verdict,
	CASE
	WHEN t.status = 'passed' THEN (SELECT group_concat(v.reason, '; ')
		FROM verdicts v WHERE v.test_id = t.id AND v.status = 'failed')
	WHEN t.message IS NOT NULL AND t.message <> '' THEN t.message
	WHEN (SELECT sum(m.wrong) FROM measurements m
		WHERE m.test_id = t.id) > 0 THEN
		(SELECT printf('%d wrong elements; first at %d bytes, rank %d, '
			|| 'index %d: expected %s, got %s', s.total, m.size_bytes,
			m.first_wrong_rank, m.first_wrong_index,
			m.first_wrong_expected, m.first_wrong_got)
		FROM measurements m,
			(SELECT sum(wrong) AS total FROM measurements
				WHERE test_id = t.id) s
		WHERE m.test_id = t.id AND m.wrong > 0
		ORDER BY m.id LIMIT 1)
	ELSE 'test ' || t.status
	END AS verdict_reason,
	coalesce(t.plan_test, t.test_index + 1) AS number,
	coalesce(t.attempt, 1) AS attempt,
	o.outcome,
	t.variant,
	t.round,
	t.pairing,
	t.seed
FROM tests t JOIN runs r ON r.id = t.run_id
	JOIN (SELECT t2.id,
		CASE
		WHEN t2.status NOT IN ('passed', 'failed') THEN t2.status
		WHEN EXISTS (SELECT 1 FROM tests u WHERE u.run_id = t2.run_id
			AND u.plan_test = t2.plan_test
			AND u.members IS t2.members
			AND u.attempt > t2.attempt) THEN 'retried'
		WHEN EXISTS (SELECT 1 FROM verdicts v WHERE v.test_id = t2.id
			AND v.outcome IS NOT NULL) THEN
			(SELECT v.outcome FROM verdicts v WHERE v.test_id = t2.id
				AND v.outcome IS NOT NULL LIMIT 1)
		WHEN t2.status = 'failed' OR EXISTS (SELECT 1 FROM verdicts v
			WHERE v.test_id = t2.id AND v.status = 'failed')
			THEN 'failed'
		ELSE 'passed' END AS outcome
		FROM tests t2) o ON o.id = t.id;

-- Since version 8: the hosts of each test, one row per test and host:
-- the hosts of the ranks in tests.members (the whole job where it is
-- NULL), so that a host's figures are those of the tests it took part in.
CREATE VIEW test_hosts_v AS
WITH RECURSIVE parts(test_id, run_id, part, rest) AS (
	SELECT t.id, t.run_id, '',
		coalesce(t.members, '0-' || (r.nranks - 1)) || ','
	FROM tests t JOIN runs r ON r.id = t.run_id
	UNION ALL
	SELECT test_id, run_id, substr(rest, 1, instr(rest, ',') - 1),
		substr(rest, instr(rest, ',') + 1)
	FROM parts WHERE rest <> ''
), spans(test_id, run_id, lo, hi) AS (
	SELECT test_id, run_id,
		CAST(iif(instr(part, '-') > 0,
			substr(part, 1, instr(part, '-') - 1), part) AS INTEGER),
		CAST(iif(instr(part, '-') > 0,
			substr(part, instr(part, '-') + 1), part) AS INTEGER)
	FROM parts WHERE part <> ''
)
SELECT DISTINCT s.test_id, s.run_id, k.host
FROM spans s
	JOIN ranks k ON k.run_id = s.run_id AND k.rank BETWEEN s.lo AND s.hi;

-- Since version 4: the network interfaces each host reported
-- (host_env.env_json's topology).
CREATE VIEW host_interfaces AS
SELECT h.run_id,
	h.host,
	json_extract(i.value, '$.name') AS name,
	json_extract(i.value, '$.state') AS state,
	json_extract(i.value, '$.speed_mbps') AS speed_mbps,
	json_extract(i.value, '$.mtu') AS mtu,
	json_extract(i.value, '$.address') AS address
FROM host_env h, json_each(h.env_json, '$.topology.interfaces') i;

-- Every measurement with the test and run it belongs to; since version 5
-- with every measured column.
CREATE VIEW measurements_v AS
SELECT m.id AS measurement_id,
	r.uuid AS run_uuid,
	r.started_at AS run_started_at,
	r.status AS run_status,
	r.backend,
	j.nodelist,
	j.nnodes,
	t.test_index,
	t.name AS test_name,
	t.op,
	t.dtype,
	t.redop,
	t.root,
	t.scope,
	t.nranks,
	t.status AS test_status,
	m.size_bytes,
	m.count,
	m.in_place,
	m.iters,
	m.warmup_iters,
	m.time_us,
	m.time_us_min,
	m.time_us_avg,
	m.time_us_max,
	m.iter_us_min,
	m.iter_us_p50,
	m.iter_us_p99,
	m.iter_us_max,
	m.algbw_gbs,
	m.busbw_gbs,
	m.ds_size_bytes,
	m.ds_description,
	m.ds_throughput_gbps,
	m.ds_busbw_gbps,
	m.checked,
	m.wrong,
	m.first_wrong_rank,
	m.first_wrong_index,
	m.first_wrong_expected,
	m.first_wrong_got,
	m.algo
FROM measurements m
	JOIN tests t ON t.id = m.test_id
	JOIN runs r ON r.id = t.run_id
	LEFT JOIN jobs j ON j.run_id = r.id;

-- Since version 2: the best bus bandwidth of each run per operation, data
-- type and size (in or out of place), for history over time.
CREATE VIEW busbw_history AS
SELECT r.uuid AS run_uuid,
	r.started_at,
	r.status AS run_status,
	j.nodelist,
	j.nnodes,
	r.nranks,
	t.op,
	t.dtype,
	m.size_bytes,
	max(m.busbw_gbs) AS busbw_gbs,
	min(m.time_us) AS time_us,
	sum(m.wrong) AS wrong
FROM runs r
	JOIN tests t ON t.run_id = r.id
	JOIN measurements m ON m.test_id = t.id
	LEFT JOIN jobs j ON j.run_id = r.id
GROUP BY r.id, t.op, t.dtype, m.size_bytes;

-- Since version 6: one line per training run: its facts, the job's
-- metrics and verdict.
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

-- Since version 6: every step of the job of each training run beside
-- its reference's step (NULL where the reference has none or was
-- deleted).
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

-- Since version 7: every matrix multiply with its run.
CREATE VIEW gemm_results_v AS
SELECT g.id AS gemm_result_id,
	r.uuid AS run_uuid,
	r.started_at AS run_started_at,
	r.status AS run_status,
	r.backend,
	j.nodelist,
	g.rank,
	g.host,
	g.device,
	g.dtype,
	g.shape,
	g.m,
	g.n,
	g.k,
	g.iters,
	g.warmup_iters,
	g.time_us,
	g.time_us_min,
	g.time_us_max,
	g.tflops,
	g.checked,
	g.wrong,
	g.max_error,
	g.tolerance,
	g.best,
	g.impl,
	d.status AS device_status,
	d.reason AS device_reason
FROM gemm_results g
	JOIN runs r ON r.id = g.run_id
	LEFT JOIN jobs j ON j.run_id = r.id
	LEFT JOIN gemm_devices d ON d.run_id = g.run_id AND d.rank = g.rank
		AND d.dtype = g.dtype;

-- The database's own facts, by key.  'database_uuid': its identity, a
-- random UUID made when the file is created (or migrated to version 13)
-- and never changed; the journals of its runs are named by it.
CREATE TABLE meta (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
INSERT INTO meta (key, value) VALUES ('database_uuid',
	(SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' ||
		substr(h, 14, 3) || '-' ||
		substr('89ab', 1 + (abs(random()) % 4), 1) ||
		substr(h, 18, 3) || '-' || substr(h, 21, 12)
	 FROM (SELECT lower(hex(randomblob(16))) AS h)));

PRAGMA user_version = 13;
