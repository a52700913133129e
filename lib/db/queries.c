/*
 * queries.c - the queries the library runs for more than one caller:
 * `shakedown history` (src/db/cmd_db.c), the HTML report's history
 * (report_html.c) and bench/db_bench.c, which times it; the run list of
 * `shakedown runs`.  In lib/ so that
 * the library needs nothing from the tool (test/system/layers.t).
 */
#include "db_internal.h"

/* `shakedown history`: per run, data type and size, the best bus bandwidth
 * of op ?1 (?2 size, ?3 dtype, ?4 since, ?5 until: NULL for any).  With
 * ?6 a host, only the tests that host took part in (test_hosts_v): its
 * figure is the best of its own groups, node pairs and rails, so a slow
 * host shows slow even when the run's other groups were fast. */
const char sd_db_history_sql[] =
	"SELECT r.started_at, r.uuid AS run_uuid, r.status AS run_status, "
	" j.nodelist, r.nranks, t.dtype, m.size_bytes, "
	" max(m.busbw_gbs) AS busbw_gbs, min(m.time_us) AS time_us, "
	" sum(m.wrong) AS wrong "
	"FROM tests t "
	" JOIN runs r ON r.id = t.run_id "
	" JOIN measurements m ON m.test_id = t.id "
	" LEFT JOIN jobs j ON j.run_id = r.id "
	"WHERE t.op = ?1 "
	" AND (?2 IS NULL OR m.size_bytes = ?2) "
	" AND (?3 IS NULL OR t.dtype = ?3) "
	" AND (?4 IS NULL OR r.started_at >= ?4) "
	" AND (?5 IS NULL OR r.started_at < "
	"      iif(length(?5) = 10, date(?5, '+1 day'), ?5)) "
	" AND (?6 IS NULL OR t.id IN (SELECT test_id FROM test_hosts_v "
	"      WHERE host = ?6)) "
	"GROUP BY r.id, t.dtype, m.size_bytes "
	"ORDER BY r.started_at, r.id, t.dtype, m.size_bytes";

/* `shakedown runs`: the runs of a database, newest first, with their
 * plan (its name: line, a training run's config, else the kind), nodes,
 * outcome and counts.  ?1 since, ?2 until (a date: the whole day), ?3
 * plan, ?4 status, ?5 kind (each NULL: any), ?6 at most this many rows,
 * ?7 1: the run's id as its first 8 characters. */
const char sd_db_runs_sql[] =
	"WITH p AS (SELECT id, char(10) || coalesce(plan_text, '') || char(10) AS t, "
	"instr(char(10) || coalesce(plan_text, ''), char(10) || 'name:') AS at "
	"FROM runs), "
	"rr AS (SELECT r.*, "
	"coalesce(iif(p.at > 0, nullif(trim(substr(p.t, p.at + 6, "
	"instr(substr(p.t, p.at + 6), char(10)) - 1)), ''), NULL), "
	"tr.config, r.run_kind) AS plan "
	"FROM runs r JOIN p ON p.id = r.id "
	"LEFT JOIN train_runs tr ON tr.run_id = r.id) "
	"SELECT iif(?7, substr(r.uuid, 1, 8), r.uuid) AS run, "
	"substr(r.started_at, 1, 19) AS started, r.run_kind AS kind, r.plan, "
	"coalesce(j.nodelist, r.hostname) AS nodes, r.nranks AS ranks, "
	"r.status, r.exit_status AS exit, "
	"s.tests_passed, s.tests_total AS tests, "
	"(SELECT count(DISTINCT v.subject_kind || ' ' || v.subject) "
	"FROM verdicts v WHERE v.run_id = r.id "
	"AND v.status = 'failed') AS failed_subjects, "
	"(SELECT group_concat(DISTINCT s.hosts) FROM suspects s "
	"WHERE s.run_id = r.id AND s.bad_node) AS bad_nodes "
	"FROM rr r LEFT JOIN jobs j ON j.run_id = r.id "
	"JOIN run_summary s ON s.run_id = r.id "
	"WHERE (?1 IS NULL OR r.started_at >= ?1) "
	"AND (?2 IS NULL OR r.started_at < iif(length(?2) = 10, "
	"date(?2, '+1 day'), ?2)) "
	"AND (?3 IS NULL OR r.plan = ?3) "
	"AND (?4 IS NULL OR r.status = ?4) "
	"AND (?5 IS NULL OR r.run_kind = ?5) "
	"ORDER BY r.started_at DESC, r.id DESC "
	"LIMIT ?6";
