#!/bin/sh
# bench-fake.sh - run bench/nccl_bench.sh's whole round loop HERE, without a
# GPU: a fake nvidia-smi, fake nccl-tests binaries and a fake shakedown that
# print the tables of bench/samples/ (so the figures are the samples', not
# measurements).  Proves the interleaving (the first tool alternates by
# round), the arguments each tool gets, the parsing of every run, the
# report and --out.  Needs the build tree's NCCL plugin (make, with CUDA).
#
# Usage: test/gpu/bench-fake.sh      exit 0 when every check passed
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
w=$(mktemp -d "${TMPDIR:-/tmp}/bench-fake.XXXXXX")
trap 'rm -rf "$w"' EXIT INT TERM
mkdir -p "$w/bin" "$w/nt"
s=$top/bench/samples
cat >"$w/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
-L) echo "GPU 0: FAKE GPU (UUID: GPU-fake)" ;;
*driver_version*) echo "FAKE GPU, 0.0, 9.0" ;;
*compute_cap*) echo "9.0" ;;
*) echo "FAKE GPU, P0, 1 MHz, 1 MHz, 1 MHz, 1, 1.00 W, 0 %, 1 MiB" ;;
esac
EOF
for b in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
	printf '#!/bin/sh\necho "nt %s $*" >>"%s/calls"\nsed "s/all_reduce_perf/%s_perf/" "%s/nccl-tests-all_reduce.txt"\n' \
		"$b" "$w" "$b" "$s" >"$w/nt/${b}_perf"
done
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "shakedown fake"; exit 0; }\necho "sd $*" >>"%s/calls"\nop=$(echo "$*" | sed "s/.*--op \\([a-z_]*\\).*/\\1/")\nsed "s/Test 1: all_reduce/Test 1: $op/" "%s/shakedown-all_reduce.txt"\n' \
	"$w" "$s" >"$w/bin/shakedown"
chmod +x "$w/bin/"* "$w/nt/"*
: >"$w/calls"
rc=0
PATH=$w/bin:$PATH SHAKEDOWN=$w/bin/shakedown sh "$top/bench/nccl_bench.sh" \
	--build-dir "$w/nt" --nccl /usr/local/cuda --out "$w/report.md" \
	--rounds 3 --budget 60 >"$w/stdout" 2>"$w/stderr" || rc=$?
fails=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fails=$((fails + 1)); fi; }
check "nccl_bench exits 0" '[ "$rc" = 0 ]'
check "36 runs: 3 rounds x 6 ops x 2 tools" '[ "$(wc -l <"$w/calls")" = 36 ]'
check "round 1 starts with nccl-tests, round 2 with shakedown" \
	'[ "$(sed -n 1p "$w/calls" | cut -d" " -f1)" = nt ] && [ "$(sed -n 13p "$w/calls" | cut -d" " -f1)" = sd ]'
check "nccl-tests gets -g 1 -b 8 -e 1G -f 2 -n 20 -w 5 -d float -o sum -c 1" \
	'grep -q "^nt all_reduce -g 1 -b 8 -e 1G -f 2 -n 20 -w 5 -d float -o sum -c 1$" "$w/calls"'
check "shakedown gets the same op, type, sizes and iterations" \
	'grep -q "^sd run --local 1 --backend nccl .*--format table --op all_to_all -d float32 -b 8 -e 1G -f 2 -n 20 -w 5" "$w/calls"'
check "the report went to --out" '[ -s "$w/report.md" ]'
check "the report: 3 rounds of each tool" 'grep -q "over 3 shakedown and 3 nccl-tests rounds" "$w/report.md"'
check "the report: every op" 'for o in all_reduce all_gather reduce_scatter broadcast all_to_all sendrecv; do grep -q "^| $o | 8 | out |" "$w/report.md" || exit 1; done'
check "the report: the load record before and after" 'grep -q "^- before: loadavg" "$w/report.md" && grep -q "^- after: loadavg" "$w/report.md"'
check "the report: the goal tally" 'grep -q "^Goals: [0-9]* cells met" "$w/report.md"'
[ "$fails" = 0 ] || { cat "$w/stderr"; echo "bench-fake: $fails failed"; exit 1; }
echo "bench-fake: passed"
