#!/bin/sh
# bench/compare_noise.sh - how often `shakedown compare` calls a healthy run
# a regression, and how often it finds a planted one.  Records HEALTHY
# healthy runs (default 8) of `shakedown run --local 4` on this host and
# SLOWED runs (default 2 each) with one rank slowed by 2 ms and by 0.5 ms
# per operation (SHAKEDOWN_FAULT kind=slow), all into one new database,
# interleaved, then compares every ordered pair of healthy runs (false
# alarms) and every healthy run with every slowed one (detections).
# Prints the counts with the machine's load.  Run from the build tree:
#   sh bench/compare_noise.sh [HEALTHY] [SLOWED]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SHAKEDOWN=${SHAKEDOWN:-$top/src/shakedown}
H=${1:-8}
N=${2:-2}
DB=$(mktemp -d)/compare.db
RUN="--local 4 -e 1M --no-progress --db $DB"
echo "# $(uptime)"
echo "# $H healthy runs, $N slowed by 2 ms and $N by 0.5 ms, into $DB"
i=0
while [ "$i" -lt "$H" ]; do
	# shellcheck disable=SC2086
	"$SHAKEDOWN" run $RUN >/dev/null 2>&1 || echo "healthy run $i: exit $?"
	if [ "$i" -lt "$N" ]; then
		for d in 2000 500; do
			# shellcheck disable=SC2086
			SHAKEDOWN_FAULT=rank=1,kind=slow,delay_us=$d \
				"$SHAKEDOWN" run $RUN >/dev/null 2>&1
			sqlite3 "$DB" "UPDATE runs SET message = 'slow $d'
				WHERE id = (SELECT max(id) FROM runs)"
		done
	fi
	i=$((i + 1))
done
healthy=$(sqlite3 "$DB" "SELECT uuid FROM runs WHERE message IS NULL ORDER BY id")
# regressions A B: the number compare finds
regressions() {
	"$SHAKEDOWN" compare "$1" "$2" --db "$DB" |
		sed -n 's/^\([0-9]*\) regressions* beyond.*/\1/p'
}
pairs=0 alarms=0 rows=0
for a in $healthy; do
	for b in $healthy; do
		[ "$a" = "$b" ] && continue
		n=$(regressions "$a" "$b")
		pairs=$((pairs + 1))
		[ "$n" -gt 0 ] && alarms=$((alarms + 1))
		rows=$((rows + n))
	done
done
echo "healthy pairs with a regression: $alarms of $pairs ($rows rows in all)"
for d in 2000 500; do
	found=0 tries=0
	for s in $(sqlite3 "$DB" "SELECT uuid FROM runs WHERE message = 'slow $d'"); do
		for a in $healthy; do
			n=$(regressions "$a" "$s")
			tries=$((tries + 1))
			[ "$n" -gt 0 ] && found=$((found + 1))
		done
	done
	echo "slowed by $d us: found in $found of $tries comparisons"
done
echo "# $(uptime)"
