#!/bin/sh
# db_queries.t - every query in sql/queries runs on a database of known
# runs and answers with the expected columns and rows.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
W="$top_builddir/test/system/db_writer"
DB="$TMPD/q.db"
now=$(date +%s)
old=$((now - 60 * 86400))
# two months ago: nodeA and nodeB at 10..13 GB/s; this week: nodeA at
# 10..13, nodeB at 8..11 (slower) with wrong data once
"$W" -q -T "$old" -b 10 -H nodeA "$DB" && "$W" -q -T "$old" -b 10 -H nodeB "$DB" &&
"$W" -q -T "$((now - 86400))" -b 10 -H nodeA "$DB" &&
"$W" -q -T "$((now - 86400))" -b 8 -H nodeB -w "$DB"
is "$?" 0 "four runs recorded"

# query FILE: header line and rows as CSV
query() { sqlite3 -batch -header -csv "$DB" < "$top_srcdir/sql/queries/$1"; }
n=0
for f in "$top_srcdir"/sql/queries/*.sql; do n=$((n + 1)); done
is "$n" 8 "eight queries (slowest_devices.sql: gemm.t)"

out=$(query peak_busbw_by_op.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"op,dtype,peak_busbw_gbs,size_bytes,nranks,nodelist,run_uuid,run_started_at,runs" \
	"peak_busbw_by_op: columns"
like "$out" "all_reduce,float32,13.0,8192,2,node[AB],.*,3" \
	"peak_busbw_by_op: the peak and where, over the 3 runs that did not fail"

out=$(query busbw_by_host.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"host,op,runs,avg_busbw_gbs,min_busbw_gbs,max_busbw_gbs,last_run_at" "busbw_by_host: columns"
like "$out" "nodeB,all_reduce,2,12.0,11.0,13.0," "busbw_by_host: nodeB's numbers"

out=$(query slowest_nodes.sql)
is "$(printf '%s\n' "$out" | head -1)" "host,runs,avg_busbw_gbs,pct_of_all_hosts" \
	"slowest_nodes: columns"
is "$(printf '%s\n' "$out" | sed -n 2p)" "nodeB,2,12.0,96.0" "slowest_nodes: nodeB first"

# runs that did not complete, and a failed run faster than any: not
# counted by busbw_by_host and slowest_nodes, not the peak (a database of
# their own, so that the other queries' answers stay)
DB2="$TMPD/q2.db"
"$W" -q -T "$old" -b 10 -H nodeA "$DB2" && "$W" -q -T "$old" -b 10 -H nodeB "$DB2" &&
"$W" -q -T "$((now - 86400))" -b 1 -H nodeB -S aborted "$DB2" &&
"$W" -q -T "$((now - 86400))" -b 2 -H nodeB -S cancelled "$DB2" &&
"$W" -q -T "$((now - 86400))" -b 50 -H nodeA -S failed "$DB2"
is "$?" 0 "five more runs in a second database"
query2() { sqlite3 -batch -header -csv "$DB2" < "$top_srcdir/sql/queries/$1"; }
like "$(query2 busbw_by_host.sql)" "nodeB,all_reduce,1,13.0,13.0,13.0," \
	"busbw_by_host: nodeB's aborted and cancelled runs are not counted"
is "$(query2 slowest_nodes.sql | sed -n 2p)" "nodeA,1,13.0,100.0" \
	"slowest_nodes: neither are they, nor the failed run stopped early (exit 0 with status failed)"
like "$(query2 peak_busbw_by_op.sql)" "all_reduce,float32,13.0,8192," \
	"peak_busbw_by_op: the failed run's 53 GB/s is not the peak"

out=$(query failed_runs.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"started_at,uuid,status,exit_status,message,nodelist,failed_tests" "failed_runs: columns"
like "$out" "failed,1,\"wrong data in 1 test\",nodeB,\"all_gather \(float32\): 3 wrong elements" \
	"failed_runs: the failed run and why"
is "$(printf '%s\n' "$out" | wc -l)" 2 "failed_runs: only that one"

out=$(query regressions_since.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"op,dtype,size_bytes,runs_before,runs_since,before_busbw_gbs,since_busbw_gbs,delta_pct" \
	"regressions_since: columns"
like "$out" "all_reduce,float32,1024,2,2,10.0,9.0,-10.0" "regressions_since: the drop at 1K"
is "$(printf '%s\n' "$out" | wc -l)" 9 "regressions_since: every size of both ops (8 rows)"

out=$(query runs_per_day.sql)
is "$(printf '%s\n' "$out" | head -1)" "day,runs,passed,failed,other,total_duration_s" \
	"runs_per_day: columns"
like "$out" ",2,1,1,0,25.0" "runs_per_day: yesterday's two runs"

out=$(query wrong_data.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"started_at,run_uuid,test,dtype,size_bytes,in_place,wrong,first_wrong_rank,first_wrong_host,first_wrong_index,first_wrong_expected,first_wrong_got" \
	"wrong_data: columns"
like "$out" "all_gather,float32,8192,1,3,1,nodeB,7,\"1.5 \(0x3fc00000\)\"" \
	"wrong_data: the element and its host"

done_testing
