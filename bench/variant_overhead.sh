#!/bin/sh
# bench/variant_overhead.sh - whether a test measured in worker processes
# (a plan's transport, iface or process_env: lib/worker.h) measures what
# the same test measures in the ranks' own processes.  Runs ROUNDS times
# (default 10) a plan of the same all_reduce twice on `--local 4`, once in
# the ranks and once in workers (process_env), in both orders
# alternately, into one new database; prints per size the median of the
# worker's / the rank's time over the rounds, with its range, and the
# machine's load.  1.00 means the worker costs nothing inside the timing;
# its start-up (a process, a communicator) is outside it.  Run from the
# build tree:  sh bench/variant_overhead.sh [ROUNDS]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SHAKEDOWN=${SHAKEDOWN:-$top/src/shakedown}
R=${1:-10}
T=$(mktemp -d)
DB=$T/overhead.db
for order in rank-first worker-first; do
	rank='{op: all_reduce}'
	worker='{op: all_reduce, process_env: {SHAKEDOWN_BENCH: 1}}'
	if [ "$order" = rank-first ]; then a=$rank b=$worker; else a=$worker b=$rank; fi
	printf 'name: %s\ndefaults: {min_bytes: 4K, max_bytes: 4M, step_factor: 8, iters: 20, warmup: 5}\ntests:\n  - %s\n  - %s\n' \
		"$order" "$a" "$b" >"$T/$order.yaml"
done
echo "# $(uptime)"
i=0
while [ "$i" -lt "$R" ]; do
	for order in rank-first worker-first; do
		"$SHAKEDOWN" run --local 4 --plan "$T/$order.yaml" --db "$DB" \
			--no-progress >/dev/null 2>&1 ||
			echo "round $i $order: exit $?"
	done
	i=$((i + 1))
done
echo "# $(uptime)"
# per run and size: worker time / rank time (out of place), then the
# median and range over the runs
sqlite3 -separator ' ' "$DB" "
WITH t AS (SELECT t.run_id, m.size_bytes, m.time_us,
	t.variant IS NOT NULL AS w
	FROM tests t JOIN measurements m ON m.test_id = t.id
	WHERE m.in_place = 0),
r AS (SELECT a.run_id, a.size_bytes, b.time_us / a.time_us AS ratio
	FROM t a JOIN t b ON b.run_id = a.run_id
	AND b.size_bytes = a.size_bytes AND a.w = 0 AND b.w = 1)
SELECT size_bytes, count(*), min(ratio), max(ratio),
	(SELECT group_concat(ratio) FROM (SELECT ratio FROM r r2
	WHERE r2.size_bytes = r.size_bytes ORDER BY ratio))
FROM r GROUP BY size_bytes ORDER BY size_bytes" |
python3 -c '
import sys
print("size_bytes  runs  worker/rank time: median (min-max)")
for line in sys.stdin:
    s, n, lo, hi, allr = line.split()
    v = sorted(float(x) for x in allr.split(","))
    k = len(v)
    med = (v[(k - 1) // 2] + v[k // 2]) / 2
    print("%10s  %4s  %.3f (%.3f-%.3f)" % (s, n, med, float(lo), float(hi)))
'
rm -rf "$T"
