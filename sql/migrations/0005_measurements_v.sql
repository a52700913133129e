-- 0005_measurements_v.sql - schema version 4 to 5: measurements_v carries
-- every measured column (DeepSpeed's, the average and per-iteration
-- extremes, the warm-up, the first wrong element), not a choice of them.
DROP VIEW measurements_v;
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
