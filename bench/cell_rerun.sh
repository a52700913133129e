#!/bin/sh
# cell_rerun.sh - the cells that a cpu_bench.sh sitting failed against raw
# Gloo's best algorithm at 1 MiB and up, each run again alone: PAIRS
# interleaved pairs of raw Gloo (its best algorithm and placement in the
# sitting) and shakedown (auto, the same placement), more iterations than
# the sitting's, medians; with the load average before and after.  Tells a
# cell that is slower from one the sitting's neighbours made slower.
#
#   bench/cell_rerun.sh SITTING.md > rerun.md      (about 5 minutes)
# Env: PAIRS (3), SHAKEDOWN (src/shakedown)
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SD=${SHAKEDOWN:-$TOP/src/shakedown}
RAW=$TOP/bench/gloo_raw
PAIRS=${PAIRS:-3}
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: $0 SITTING.md" >&2; exit 2; }
cells=$(awk -F'|' '/^## Against raw/ {on = 1; next} /^## / {on = 0}
	on && /FAIL/ && $4 ~ /MiB/ {
		gsub(/ /, "", $2); gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $4)
		b = $6; gsub(/^ +| +$/, "", b); split(b, x, " ")
		p = x[2]; gsub(/[()]/, "", p)
		sz = $4; sub(/ MiB/, "M", sz)
		print $2 ":" $3 ":" sz ":" x[1] ":" p }' "$1")
iters() { case $1 in 1M) echo 50 ;; 16M) echo 10 ;; *) echo 5 ;; esac; }
med() { sort -n | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "# cell_rerun: $(date -u +%FT%TZ), $PAIRS interleaved pairs per cell, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| ranks | op | size | raw algo (placement) | raw busbw GB/s | shakedown busbw GB/s | ratio |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for c in $cells; do
	IFS=: read -r n op sz algo pl <<EOC
$c
EOC
	it=$(iters "$sz")
	: >/tmp/cr.raw.$$; : >/tmp/cr.sd.$$
	for _ in $(seq "$PAIRS"); do
		"$RAW" -n "$n" -o "$op" -a "$algo" "$sz:$it:2" 2>/dev/null |
			sed -n "s/.*placement=$pl .*busbw_gbs=\([0-9.]*\).*/\1/p" >>/tmp/cr.raw.$$
		want=false only=--no-in-place
		[ "$pl" = in ] && want=true only=
		# shellcheck disable=SC2086 # $only: one option or none
		"$SD" run --local "$n" --db none --no-progress --op "$op" \
			-b "$sz" -e "$sz" -n "$it" -w 2 $only --format json 2>/dev/null |
			python3 -c 'import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if str(d["in_place"]).lower() == sys.argv[1]:
        print(d["busbw_gbs"])' "$want" >>/tmp/cr.sd.$$
	done
	r=$(med </tmp/cr.raw.$$); s=$(med </tmp/cr.sd.$$)
	echo "| $n | $op | $sz | $algo ($pl) | $r | $s | x$(awk -v a="$s" -v b="$r" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }') |"
done
rm -f /tmp/cr.raw.$$ /tmp/cr.sd.$$
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
