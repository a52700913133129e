#!/bin/sh
# bench/report_html.sh - how `shakedown report --format html` grows: the
# generation time and file size for synthetic runs of 10, 100 and 1,000
# tests, and for a 512-node run with a verdict per node and per node pair.
# Not part of make check; the results are in bench/README-report.md.
#
#   sh bench/report_html.sh [SHAKEDOWN]     (default: src/shakedown)
#   BENCH_KEEP=DIR sh bench/report_html.sh  keeps each page in DIR
#
# A "test" is a row of the tests table (one op, dtype, redop, root and
# scope) with its sweep: 24 sizes (8 B to 64 MiB, x2) out of place and in
# place, 48 measurement rows, as nccl-tests' default -b 8 -e 64M -f 2 is.
# The rows are written straight into an SQLite file that a real one-rank
# run created (the project's schema, at its current version).
set -eu
SD=${1:-src/shakedown}
W=$(mktemp -d "${TMPDIR:-/tmp}/sdbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$SD" run --no-progress --local 1 --op all_reduce -b 4K -e 4K -n 1 -w 0 \
	--db "$W/base.db" >/dev/null 2>&1 || true
[ -s "$W/base.db" ] || { echo "report_html.sh: the seed run failed" >&2; exit 1; }

now() { date +%s.%N; }

# synth DB NTESTS NNODES: one run with NTESTS tests of 48 measurements; with
# NNODES > 1 its nodes are node[001-NNODES] and test 0 has a verdict per
# node (peers) and per ring node pair, two of them failed
synth() {
	sqlite3 "$1" <<SQL
INSERT INTO runs (uuid, started_at, finished_at, status, exit_status,
	message, command_line, plan_text, plan_hash, tool_version, backend,
	backend_version, user, hostname, nranks)
SELECT 'bench-$2-$3', started_at, finished_at, 'failed', 6,
	'1 subject failed its expectations', command_line, plan_text,
	plan_hash, tool_version, backend, backend_version, user, hostname, $3
FROM runs WHERE id = 1;
INSERT INTO jobs (run_id, launcher, nodelist, nnodes)
VALUES (last_insert_rowid(), 'srun',
	CASE WHEN $3 > 1 THEN printf('node[001-%03d]', $3) ELSE 'vm' END, $3);
WITH RECURSIVE t(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM t WHERE i + 1 < $2)
INSERT INTO tests (run_id, test_index, name, op, dtype, redop, scope, nranks,
	status, members)
SELECT (SELECT max(id) FROM runs), i,
	CASE i % 4 WHEN 0 THEN 'all_reduce' WHEN 1 THEN 'all_gather'
	WHEN 2 THEN 'reduce_scatter' ELSE 'alltoall' END,
	CASE i % 4 WHEN 0 THEN 'all_reduce' WHEN 1 THEN 'all_gather'
	WHEN 2 THEN 'reduce_scatter' ELSE 'alltoall' END,
	CASE (i / 4) % 3 WHEN 0 THEN 'float32' WHEN 1 THEN 'bfloat16'
	ELSE 'float16' END, 'sum', 'world', $3 * 8, 'passed', '0-' || ($3 * 8 - 1)
FROM t;
WITH RECURSIVE s(k) AS (SELECT 3 UNION ALL SELECT k + 1 FROM s WHERE k < 26),
	p(ip) AS (SELECT 0 UNION ALL SELECT 1)
INSERT INTO measurements (test_id, size_bytes, count, in_place, iters,
	warmup_iters, time_us, algbw_gbs, busbw_gbs, checked, wrong)
SELECT t.id, 1 << s.k, (1 << s.k) / 4, p.ip, 20, 5,
	10.0 + (1 << s.k) / 200000.0,
	(1 << s.k) / (10.0 + (1 << s.k) / 200000.0) / 1000.0,
	(1 << s.k) / (10.0 + (1 << s.k) / 200000.0) / 1000.0 * 1.75
		* (0.95 + 0.1 * ((t.test_index * 7 + s.k) % 10) / 10.0), 1, 0
FROM tests t, s, p WHERE t.run_id = (SELECT max(id) FROM runs);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $3)
INSERT INTO verdicts (run_id, test_id, subject_kind, subject, hosts,
	expectation, size_bytes, measured, threshold, unit, status, reason)
SELECT (SELECT max(id) FROM runs), (SELECT min(id) FROM tests WHERE run_id =
	(SELECT max(id) FROM runs)), 'node', printf('node%03d', i),
	printf('node%03d', i), 'peers', 67108864,
	CASE WHEN i IN (17, 300) THEN 40.0 ELSE 180.0 + (i * 37 % 20) END,
	0.8, 'GB/s', CASE WHEN i IN (17, 300) THEN 'failed' ELSE 'passed' END,
	'synthetic'
FROM n WHERE $3 > 1;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $3)
INSERT INTO verdicts (run_id, test_id, subject_kind, subject, hosts,
	expectation, size_bytes, measured, threshold, unit, status, reason)
SELECT (SELECT max(id) FROM runs), (SELECT min(id) FROM tests WHERE run_id =
	(SELECT max(id) FROM runs)), 'node-pair',
	printf('node%03d,node%03d', i, i % $3 + 1),
	printf('node[%03d,%03d]', i, i % $3 + 1), 'link', 67108864,
	CASE WHEN i IN (17, 300) THEN 20.0 ELSE 45.0 + (i * 13 % 10) END,
	0.8, 'GB/s', CASE WHEN i IN (17, 300) THEN 'failed' ELSE 'passed' END,
	'synthetic'
FROM n WHERE $3 > 1;
INSERT INTO suspects (run_id, kind, subject, hosts, bad_node, reason)
SELECT (SELECT max(id) FROM runs), 'node', 'node' || x, 'node' || x, 1,
	'synthetic: slow'
FROM (SELECT '017' AS x UNION ALL SELECT '300') WHERE $3 > 1;
SQL
}

printf '| run | tests | measurements | file size | generation time |\n'
printf '|---|---:|---:|---:|---:|\n'
for spec in "10 1" "100 1" "1000 1" "10 512"; do
	set -- $spec
	cp "$W/base.db" "$W/r.db"
	synth "$W/r.db" "$1" "$2"
	m=$(sqlite3 "$W/r.db" "SELECT count(*) FROM measurements m JOIN tests t ON t.id = m.test_id WHERE t.run_id = (SELECT max(id) FROM runs)")
	t0=$(now)
	"$SD" report "bench-$1-$2" --db "$W/r.db" --format html -o "$W/r.html"
	t1=$(now)
	[ -n "${BENCH_KEEP:-}" ] && cp "$W/r.html" "$BENCH_KEEP/report-$1-$2.html"
	label="$1 tests"
	[ "$2" -gt 1 ] && label="$2 nodes, $1 tests, per node and ring pair"
	printf '| %s | %d | %d | %d bytes | %.3f s |\n' "$label" "$1" "$m" \
		"$(wc -c < "$W/r.html")" "$(echo "$t1 - $t0" | bc -l)"
done
printf '\nload average: %s; %s CPUs\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
