/*
 * queries.c - the queries the library runs for more than one caller:
 * `shakedown history` (src/db/cmd_db.c), the HTML report's history
 * (report_html.c) and bench/db_bench.c, which times it.  In lib/ so that
 * the library needs nothing from the tool (test/system/layers.t).
 */
#include "db_internal.h"

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
	" AND (?6 IS NULL OR EXISTS (SELECT 1 FROM ranks k "
	"      WHERE k.run_id = r.id AND k.host = ?6)) "
	"GROUP BY r.id, t.dtype, m.size_bytes "
	"ORDER BY r.started_at, r.id, t.dtype, m.size_bytes";
