#!/bin/sh
# db_queries.t - every query in sql/queries runs on a database of known
# runs (collective runs, and a training run for the train_* queries) and
# answers with the expected columns and rows.
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
is "$n" 11 "eleven queries (slowest_devices.sql: gemm.t)"

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

# the training queries, on a database of their own: one training run of 2
# devices and 6 steps (the first never timed, 2 warm-up steps), judged
# against reference ref1, from which its step 6 differs by 0.5
DB3="$TMPD/t.db"
U=7a7a7a7a-0000-4000-8000-000000000001
RUN="(SELECT id FROM runs WHERE uuid = '$U')"
sqlite3 -batch "$DB3" < "$top_srcdir/sql/schema.sql" &&
sqlite3 -batch "$DB3" "
INSERT INTO runs (uuid, started_at, status, exit_status, run_kind)
	VALUES ('$U', '2026-02-01T10:00:00.000Z', 'failed', 1, 'train');
INSERT INTO train_references (name, created_at, config, source, curves)
	VALUES ('ref1', '2026-01-01T00:00:00.000Z', 'cfg', 'runs x', 1);
INSERT INTO train_reference_steps VALUES (1, 1, 3.0, 0, 1), (1, 2, 2.9, 0, 1),
	(1, 3, 2.8, 0, 1), (1, 4, 2.7, 0, 1), (1, 5, 2.6, 0, 1), (1, 6, 2.0, 0, 1);
INSERT INTO train_runs (run_id, config, device_name, devices, tokens_per_step,
	flops_per_token, warmup_steps, peak_tflops, reference_name,
	reference_id, rel_tol, abs_tol, var_tol, verdict, verdict_reason)
	VALUES ($RUN, 'cfg', 'NVIDIA H100 80GB HBM3', 2, 1000, 1e9, 2, 4.0,
	'ref1', 1, 0.05, 0, 0.01, 'failed', 'loss at step 6 is 2.5');
INSERT INTO train_steps (run_id, step, span_steps, loss, step_s, timed)
	VALUES ($RUN, 1, NULL, 3.0, 0.9, 0), ($RUN, 2, 1, 2.9, 0.5, 0),
	($RUN, 3, 1, 2.8, 0.5, 0), ($RUN, 4, 1, 2.7, 0.5, 1),
	($RUN, 5, 1, 2.6, 0.5, 1), ($RUN, 6, 1, 2.5, 0.5, 1);
INSERT INTO train_metrics (run_id, name, unit, value) VALUES
	($RUN, 'tgs', 'tokens/s/device', 1000), ($RUN, 'mfu', 'fraction', 0.25),
	($RUN, 'loss_var', 'nat^2', 0.0347222), ($RUN, 'loss_max_abs_diff',
	'nat', 0.5), ($RUN, 'loss_max_diff_step', 'step', 6),
	($RUN, 'loss_steps_compared', 'steps', 6);"
is "$?" 0 "a training run written by hand"
query3() { sqlite3 -batch -header -csv "$DB3" < "$top_srcdir/sql/queries/$1"; }

out=$(query3 train_tgs_by_run.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"started_at,uuid,run_kind,status,device_name,devices,timed_steps,tgs,recorded_tgs,tflops,mfu,recorded_mfu" \
	"train_tgs_by_run: columns"
is "$(printf '%s\n' "$out" | sed -n 2p)" \
	"2026-02-01T10:00:00.000Z,$U,train,failed,\"NVIDIA H100 80GB HBM3\",2,3,1000.0,1000.0,1.0,0.25,0.25" \
	"train_tgs_by_run: 3000 tokens in 1.5 s on 2 devices, from the rows"

out=$(query3 train_loss_vs_reference.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"run_uuid,step,loss,loss_nonfinite,reference_name,ref_loss_mean,ref_loss_spread,loss_diff,loss_rel_diff,within_tol" \
	"train_loss_vs_reference: columns"
is "$(printf '%s\n' "$out" | wc -l)" 7 "train_loss_vs_reference: every step"
is "$(printf '%s\n' "$out" | sed -n 7p)" "$U,6,2.5,,ref1,2.0,0.0,0.5,0.25,0" \
	"train_loss_vs_reference: step 6 is outside the tolerance"
is "$(printf '%s\n' "$out" | sed -n 2p)" "$U,1,3.0,,ref1,3.0,0.0,0.0,0.0,1" \
	"train_loss_vs_reference: step 1 is inside"

out=$(query3 train_worst_runs.sql)
is "$(printf '%s\n' "$out" | head -1)" \
	"started_at,uuid,run_kind,nodelist,reference_name,loss_steps_compared,loss_var,loss_rmse,loss_max_abs_diff,loss_max_diff_step,mfu,verdict,verdict_reason" \
	"train_worst_runs: columns"
is "$(printf '%s\n' "$out" | sed -n 2p)" \
	"2026-02-01T10:00:00.000Z,$U,train,,ref1,6.0,0.0347222,,0.5,6.0,0.25,failed,\"loss at step 6 is 2.5\"" \
	"train_worst_runs: the run, its largest difference and why it failed"

done_testing
