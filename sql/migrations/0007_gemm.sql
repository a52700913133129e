-- 0007_gemm.sql - schema version 6 to 7: `shakedown gemm`, every rank's
-- matrix multiplies and each device's verdict per type.  A gemm run is a
-- row of runs like any other, of run_kind 'gemm'.

-- One row per rank, type and shape of a gemm run's sweep.
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

-- One row per rank and type of a gemm run: the device's verdict.
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

-- Every matrix multiply with its run.
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
