-- slowest_devices.sql - devices ranked by their best GEMM TFLOPs
-- (`shakedown gemm`) per type, against the average of every device of
-- the same name and type: the slowest first.  A device is a host and a
-- PCI bus id (GPUs), or a host and its CPU name (the CPU path, its
-- ranks together); its best is averaged over the gemm runs that
-- completed (passed, or failed on wrong math or an expectation: exit 1
-- or 6), as in slowest_nodes.sql.
--   sqlite3 -header -column results.db < slowest_devices.sql
WITH per_device AS (
	SELECT d.host,
		coalesce(k.pci_bus_id, '') AS pci_bus_id,
		d.device,
		d.dtype,
		count(DISTINCT d.run_id) AS runs,
		avg(d.best_tflops) AS tflops,
		max(r.started_at) AS last_run_at
	FROM gemm_devices d
		JOIN runs r ON r.id = d.run_id
		LEFT JOIN ranks k ON k.run_id = d.run_id AND k.rank = d.rank
	WHERE d.best_tflops IS NOT NULL
		AND (r.status = 'passed'
			OR (r.status = 'failed' AND r.exit_status IN (1, 6)))
	GROUP BY d.host, coalesce(k.pci_bus_id, ''), d.device, d.dtype
)
SELECT host,
	pci_bus_id,
	device,
	dtype,
	runs,
	round(tflops, 3) AS avg_best_tflops,
	round(100.0 * tflops / (SELECT avg(p2.tflops) FROM per_device p2
		WHERE p2.device IS p.device AND p2.dtype = p.dtype), 1)
		AS pct_of_same_devices,
	last_run_at
FROM per_device p
ORDER BY pct_of_same_devices, tflops
LIMIT 20;
