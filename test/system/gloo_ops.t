#!/bin/sh
# gloo_ops.t - every op, data type and reduction the Gloo backend supports,
# in place and out of place, on 2, 3 and 4 ranks of `shakedown run --local`,
# with every algorithm the plugin offers for the ops that have several.
# Checks the exit status and every JSON row: times positive, busbw = algbw
# x the op's factor, #wrong 0, and that every (op, type, redop, placement)
# combination appeared.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v python3 >/dev/null || skip_all "python3 is needed to read JSON"

S="$SHAKEDOWN run --no-progress --db none --format json -n 2 -w 1"
OPS=all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,gather,scatter,sendrecv,pt2pt
TYPES=int8,uint8,int32,int64,float16,float32,float64

# check FILE NRANKS: the rows obey the formulas and cover the matrix
check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
factor = {"all_reduce": 2.0 * (n - 1) / n, "all_gather": (n - 1) / n,
          "reduce_scatter": (n - 1) / n, "all_to_all": (n - 1) / n,
          "broadcast": 1, "reduce": 1, "gather": (n - 1) / n,
          "scatter": (n - 1) / n, "sendrecv": 1, "pt2pt": 1}
bad, seen = [], set()
for line in open(path):
    d = json.loads(line)
    seen.add((d["op"], d["dtype"], d.get("redop"), d["in_place"]))
    tag = "%s %s %s %s in_place=%s" % (d["op"], d["dtype"], d.get("redop"),
                                       d["size_bytes"], d["in_place"])
    if not d["time_us"] > 0:
        bad.append(tag + ": time_us not positive")
    if d["wrong"] != 0:
        bad.append(tag + ": %d wrong" % d["wrong"])
    want = d["algbw_gbs"] * factor[d["op"]]
    if abs(d["busbw_gbs"] - want) > 1e-6 + 0.01 * want:
        bad.append(tag + ": busbw %g != algbw x factor %g" %
                   (d["busbw_gbs"], want))
reds = {"all_reduce", "reduce", "reduce_scatter"}
inplace = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
           "reduce", "gather", "scatter"}
for op in factor:
    for t in "int8 uint8 int32 int64 float16 float32 float64".split():
        for r in (["sum", "prod", "min", "max", "avg"] if op in reds
                  else [None]):
            for ip in ([False, True] if op in inplace else [False]):
                if not any(s[0] == op and s[1] == t and s[3] == ip and
                           (r is None or s[2] == r) for s in seen):
                    bad.append("missing %s %s %s in_place=%s" %
                               (op, t, r, ip))
for b in bad[:20]:
    print("# " + b)
sys.exit(1 if bad else 0)
PY
}

plan 15
for n in 2 3 4; do
	run -t 180 $S --local $n --op $OPS -d $TYPES -o all -r all -b 1K -e 8K -f 8 \
		>/dev/null
	printf '%s\n' "$out" >"$TMPD/rows$n"
	is "$rc" 0 "every op x type x redop on $n ranks: exit 0"
	[ "$rc" = 0 ] || printf '%s\n' "$err" | tail -5 | sed 's/^/#   /'
	ok 'check "$TMPD/rows$n" $n' \
		"every op x type x redop on $n ranks: rows obey the formulas, #wrong 0, nothing missing"
done

# every algorithm of the ops that have several, by name
for n in 3 4; do
	fails=""
	for oa in all_reduce:ring all_reduce:ring_chunked \
		all_reduce:halving_doubling all_reduce:opts_ring \
		all_reduce:opts_bcube all_gather:ring all_gather:opts \
		reduce_scatter:halving_doubling reduce_scatter:opts_allreduce \
		broadcast:one_to_all broadcast:opts; do
		run -t 60 $S --local $n --op ${oa%%:*} --algo ${oa#*:} \
			-d int32,float16 -o sum,avg -r all -b 1K -e 96K -f 6
		printf '%s\n' "$out" >"$TMPD/a"
		if [ "$rc" != 0 ] || ! python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if rows and all(r["wrong"] == 0 for r in rows) else 1)' "$TMPD/a"
		then fails="$fails $oa(rc=$rc)"; fi
	done
	is "$fails" "" "every named algorithm on $n ranks: exit 0, #wrong 0"
done

# legacy bcube runs on a power of two and is refused otherwise
run -t 60 $S --local 4 --op all_reduce --algo bcube -b 1K -e 64K -f 8
is "$rc" 0 "bcube all_reduce on 4 ranks: exit 0"
run -t 60 $S --local 3 --op all_reduce --algo bcube -b 1K -e 1K
is "$rc" 2 "bcube all_reduce on 3 ranks: refused (exit 2)"
like "$err" "needs a power-of-two number of ranks" "and the message says why"

# an algorithm Gloo does not have for the op is a usage error
run -t 60 $S --local 2 --op all_to_all --algo ring -b 1K -e 1K
is "$rc" 2 "--algo ring for all_to_all: exit 2"
like "$err" "no algorithm 'ring' for all_to_all" "names the algorithm and the op"

# the algorithm auto ran is recorded, not "auto": on 2 ranks opts_bcube
# from 64 KiB to 4 MiB, opts_ring from 4 MiB (THE GLOO BACKEND in
# shakedown(1))
if command -v sqlite3 >/dev/null; then
	run -t 120 $SHAKEDOWN run --no-progress --db "$TMPD/algo.db" --local 2 \
		--op all_reduce,sendrecv -b 1M -e 8M -f 8 -n 2 -w 1
	is "$rc" 0 "auto at 1M and 8M: exit 0"
	is "$(sqlite3 "$TMPD/algo.db" "SELECT group_concat(t.op || ' ' ||
		m.size_bytes || ' ' || m.algo, ', ') FROM (SELECT * FROM
		measurements ORDER BY id) m JOIN tests t ON t.id = m.test_id
		WHERE m.in_place = 0")" \
		"all_reduce 1048576 opts_bcube, all_reduce 8388608 opts_ring, sendrecv 1048576 unbound, sendrecv 8388608 unbound" \
		"measurements.algo is the algorithm that ran"
else
	skip 2 "sqlite3 is needed to read the database"
fi

done_testing
