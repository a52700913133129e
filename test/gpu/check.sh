#!/bin/sh
# check.sh - the GPU kit's checks, inside an unpacked bundle (kit/run.sh
# starts it with SD_BUNDLE, OUT and SD_CHECK_DEADLINE; test/gpu/bundle.sh
# copies it there).  Nothing is built: every command is the bundle's.
#
# Each step runs one command under what the deadline leaves (and its own
# cap), compares the exit status with what a healthy machine gives, looks
# for the line that proves the point, and says what it proves.  It prints a
# TAP line and appends a JSON object to $OUT/steps.jsonl:
#   {"step", "group", "ok" (true, false, or null: not run), "rc", "want",
#    "secs", "proves", "figure", "peer", "ratio"}
# figure: what was measured (TFLOPs, tgs, a version); peer: the peer's
# figure on the same GPU (torch.matmul, PyTorch's GPT, nccl-tests); ratio:
# shakedown / peer.
#
# Groups (SD_GPU_STEPS, default all; in this order):
#   basics   version; a shipped plan found by name and checked; a 2-rank
#            Gloo run (the carried Gloo); train on the CPU against the
#            shipped reference (found relative to the executable)
#   nogpu    only with SD_GPU_DRY=1 (no GPU): run, gemm, train and topo
#            with --backend nccl each exit 3 with exactly one line
#   device   the device report (-J: nccl-tests' JSON names the GPU), topo
#            (JSON naming the GPU and its links), the link probe
#   ops      1 rank: every op, data type and reduction, every element
#            checked (fp8 without avg: NCCL's one-rank path refuses it),
#            per-iteration percentiles in order
#   faults   wrong data counted, a hung kernel aborted (exit 4), a stalled
#            rank timed out (exit 4), sizes beyond the GPU's memory refused
#            before any allocation (exit 3), two ranks on one GPU refused
#            (exit 3)
#   env      a test's env reaches NCCL as its communicator's ncclConfig_t;
#            transport variants (p2p, shm, tcp) run in worker processes on
#            the GPU and record their path verdicts (one rank: skipped)
#   gemm     every type over the default sweep, every product checked,
#            beside torch.matmul on the same shapes (best TFLOPs per type,
#            ratio); bf16 above half the H100/H200 peak; fp8 where the
#            compute capability has it; wrong math and a slow GPU caught
#   train    the test and default configs 100 steps against the shipped
#            CPU curves, tgs and TFLOPs recomputed from the database rows,
#            MFU against the peak table; the 1b config (a 1B-parameter
#            shape) for tgs and MFU; PyTorch eager's GPT on the same GPU
#            and configs (tokens/s ratio); two ranks on one GPU refused
#   bench    nccl-tests -g 1 beside shakedown, interleaved
#            (kit/nccl_bench.sh, the report in $OUT/nccl_bench.md)
#
# What one GPU cannot prove, and this does not claim: any multi-rank
# kernel (NCCL refuses two ranks of one communicator on one GPU), NVLink or
# PCIe between GPUs, avg over n >= 2 ranks, a slow GPU named by its peers.
#
# Usage: check.sh                           (from run.sh)
#        check.sh --summary STEPS.jsonl SECONDS   the summary table, from
#                                           the JSON lines (sh and awk only)
# Exit: 0 when no step failed, 1 otherwise.
set -u

# -- the summary table ---------------------------------------------------
if [ "${1:-}" = --summary ]; then
	awk -v secs="${3:-?}" '
	function field(k,   re, s) {
		re = "\"" k "\":(\"([^\"\\\\]|\\\\.)*\"|[^,}]*)"
		if (!match($0, re)) return ""
		s = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
		if (s ~ /^"/) { s = substr(s, 2, length(s) - 2); gsub(/\\"/, "\"", s); gsub(/\\\\/, "\\", s) }
		if (s == "null") s = ""
		return s
	}
	{
		n++; name[n] = field("step"); st = field("ok")
		res[n] = st == "true" ? "ok" : st == "false" ? "**not ok**" : "not run"
		if (st == "true") p++; else if (st == "false") f++; else s++
		t[n] = field("secs"); fig[n] = field("figure"); r[n] = field("ratio"); peer[n] = field("peer")
	}
	END {
		printf "\n## GPU kit summary: %d steps, %d ok, %d not ok, %d not run, %s s\n\n", n, p, f, s, secs
		print "| # | step | result | s | figure | ratio to peer |"
		print "| ---: | --- | --- | ---: | --- | --- |"
		for (i = 1; i <= n; i++) {
			rr = r[i] == "" ? "" : r[i] " (peer " peer[i] ")"
			gsub(/\|/, "/", name[i]); gsub(/\|/, "/", fig[i]); gsub(/\|/, "/", rr)
			printf "| %d | %s | %s | %s | %s | %s |\n", i, name[i], res[i], t[i], fig[i], rr
		}
	}' "$2"
	exit 0
fi

kit=$(cd "$(dirname "$0")" && pwd -P)
B=${SD_BUNDLE:-$(dirname "$kit")}
OUT=${OUT:-/tmp/sd-gpu-out}
mkdir -p "$OUT"
top_builddir=$B top_srcdir=$B SHAKEDOWN=$B/bin/shakedown
. "$kit/lib.sh"
# the bundle finds its own plugins, plans and references relative to its
# executable: nothing points it there
unset SHAKEDOWN_PLUGIN_DIR SHAKEDOWN_PLAN_DIR
sd=$B/bin/shakedown
sq=$kit/sqlite3
DB=$OUT/shakedown.db
jsonl=$OUT/steps.jsonl
deadline=${SD_CHECK_DEADLINE:-$(( $(date +%s) + 420 ))}
dry=${SD_GPU_DRY:-}
groups=${SD_GPU_STEPS:-"basics nogpu device gemm train ops faults env bench"}
wants() { case " $groups " in *" $1 "*) return 0 ;; esac; return 1; }
group=""

# pythons run with the machine's own library path, not the bundle's CUDA
# and NCCL folders (PyTorch brings its own); a command, not a function, so
# that step can run it under timeout
py="env LD_LIBRARY_PATH=${SD_ORIG_LD_LIBRARY_PATH:-} python3"

json_str() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/	/ /g' | tr -d '\n\r'; }
# emit NAME OK RC WANT SECS PROVES [FIGURE PEER RATIO]
emit() {
	printf '{"step":"%s","group":"%s","ok":%s,"rc":%s,"want":%s,"secs":%s,"proves":"%s","figure":"%s","peer":"%s","ratio":"%s"}\n' \
		"$(json_str "$1")" "$group" "$2" "${3:-null}" "${4:-null}" "${5:-0}" \
		"$(json_str "$6")" "$(json_str "${7:-}")" "$(json_str "${8:-}")" \
		"$(json_str "${9:-}")" >>"$jsonl"
}
left() { echo $(( deadline - $(date +%s) )); }
step_out=$TMPD/step.out

# step NAME WANT_RC REGEX CAP PROVES -- CMD...: run CMD under min(CAP, what
# the deadline leaves); ok when the exit status is WANT_RC and (when REGEX
# is not empty) stdout+stderr match it.  Its output: the log and
# $step_out.  Sets $step_ok (0 or 1), $step_rc, $step_secs.
step() {
	name=$1 want=$2 pat=$3 cap=$4 proves=$5
	shift 6
	fig=""
	l=$(left)
	if [ "$l" -lt 5 ]; then
		skip 1 "$name: no time left"
		emit "$name" null "" "$want" 0 "$proves"
		step_ok=0 step_rc=""
		: >"$step_out"
		return 0
	fi
	[ "$cap" -lt "$l" ] || cap=$l
	diag "---- $name (at most $cap s): $*"
	s0=$(date +%s)
	timeout -k 5 "$cap" "$@" >"$step_out" 2>&1
	step_rc=$?
	step_secs=$(( $(date +%s) - s0 ))
	tail -n 40 "$step_out" | sed 's/^/#   /'
	diag "     exit $step_rc (want $want), $step_secs s"
	step_ok=1
	[ "$step_rc" = "$want" ] || step_ok=0
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$step_out"; then
		diag "     no line matches /$pat/"
		step_ok=0
	fi
	if [ "$step_ok" = 1 ]; then pass "$name"; emit "$name" true "$step_rc" "$want" "$step_secs" "$proves"
	else fail "$name"; emit "$name" false "$step_rc" "$want" "$step_secs" "$proves"; fi
}
# check NAME PROVES COND [FIGURE PEER RATIO]: a judgement on what a step
# left (COND is eval'd, as lib.sh's ok)
check() {
	name=$1 proves=$2 cond=$3
	if eval "$cond" >"$TMPD/cond.out" 2>&1; then
		pass "$name"; emit "$name" true "" "" 0 "$proves" "${4:-}" "${5:-}" "${6:-}"
	else
		fail "$name"; sed 's/^/#   /' "$TMPD/cond.out"
		emit "$name" false "" "" 0 "$proves" "${4:-}" "${5:-}" "${6:-}"
	fi
}
# figure NAME PROVES FIGURE [PEER RATIO]: a measurement to report, ok when
# it was read (not empty)
figure() {
	if [ -n "$3" ]; then pass "$1: $3"; emit "$1" true "" "" 0 "$2" "$3" "${4:-}" "${5:-}"
	else fail "$1: not measured"; emit "$1" false "" "" 0 "$2" "" "${4:-}" "${5:-}"; fi
}
ratio() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b }'; }
# one line of output: the whole of stdout+stderr is that line
one_line() { [ "$(wc -l <"$step_out")" -le 1 ] && [ -s "$step_out" ]; }

diag "shakedown GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), bundle $B, $(left) s left${dry:+, DRY}"
gpuname="" cc="" ngpu=0
if [ -z "$dry" ]; then
	ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
	gpuname=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
	diag "GPUs: $ngpu, compute capability ${cc:-?}, ${gpuname:-?}"
	if [ "${ngpu:-0}" -lt 1 ]; then
		group=preflight
		emit "a GPU is visible (nvidia-smi -L)" false "" "" 0 "the machine has a GPU"
		echo "1..0 # SKIP no GPU visible to nvidia-smi: nothing proven"
		exit 1
	fi
fi
common="--backend nccl --db $DB --no-progress -c 1 -n 5 -w 2 --timeout 60"

# -- basics: no GPU needed ----------------------------------------------
if wants basics; then
	group=basics
	step "shakedown --version" 0 "^shakedown [0-9]" 10 \
		"the carried binary starts with the carried libraries" -- "$sd" --version
	figure "version" "which shakedown this is" "$(head -n 1 "$step_out")"
	step "plan check acceptance (a shipped plan, by name)" 0 "" 20 \
		"the shipped plans are found relative to the executable" -- \
		"$sd" plan check acceptance --ranks 16
	step "gloo: 2 ranks, all_reduce, every element checked" 0 "" 60 \
		"the carried Gloo plugin and its libraries run a job" -- \
		"$sd" run --local 2 --backend gloo --db "$DB" --no-progress \
		--op all_reduce -b 8 -e 1M -n 3 -w 1 --timeout 30
	step "train on the CPU: test config against the shipped reference" 0 \
		"loss check +100 steps compared: .*: passed" 120 \
		"the shipped reference is found relative to the executable and the CPU path matches it" -- \
		"$sd" train --local 2 --backend gloo --config test --steps 100 \
		--db "$DB" --no-progress --timeout 60
	step "sqlite3 reads the runs recorded" 0 "^[1-9][0-9]*$" 10 \
		"the results database is a plain SQLite file for sqlite3" -- \
		"$sq" "$DB" "SELECT count(*) FROM runs"
fi

# -- nogpu: only where no GPU is expected --------------------------------
if [ -n "$dry" ] && wants nogpu; then
	group=nogpu
	for cmd in "run --op all_reduce -b 8 -e 1K" "gemm" "train --config test --steps 2" "topo"; do
		c=${cmd%% *}
		db="--db none"
		[ "$c" = topo ] && db="" # topo records nothing
		# shellcheck disable=SC2086
		step "no GPU: $c --backend nccl exits 3" 3 \
			"no CUDA device or driver found on .*; use --backend gloo" 30 \
			"without a GPU the NCCL plugin loads, says why in one line and exits 3" -- \
			"$sd" $cmd --local 1 --backend nccl $db
		check "no GPU: $c says it in one line" \
			"one line, no noise, when there is no GPU" 'one_line'
	done
fi
[ -n "$dry" ] && { tap_summary; done_testing; }

# -- device: what the GPU is ---------------------------------------------
if wants device; then
	group=device
	step "device report: nccl-tests' JSON (-J) and table name the GPU" 0 \
		"$gpuname" 60 "the rank lines and the JSON's devices name the GPU" -- \
		"$sd" run --local 1 $common --op all_reduce -b 8 -e 1M -J "$TMPD/report.json"
	check "device report: devices[0].device_info is '$gpuname'" \
		"nccl-tests' JSON document carries the device, as nccl-tests writes it" \
		'grep -q "\"device_info\":\"$gpuname\"" "$TMPD/report.json"'
	step "topo: the GPU and its links (JSON)" 0 "$gpuname" 60 \
		"topo names the GPU through the NCCL plugin (describe_device, NVML links)" -- \
		"$sd" topo --local 1 --backend nccl --format json
	check "topo: the JSON has the links list" "topo reports links" \
		'grep -q "\"links\"" "$step_out"'
	step "nccl_links: the host's GPU links" 0 "" 30 \
		"NVML answers through dlopen (the links probe)" -- "$kit/nccl_links"
fi

# -- gemm: cuBLAS beside torch.matmul -------------------------------------
if wants gemm; then
	group=gemm
	gemm="--backend nccl --db $DB --timeout 120"
	step "gemm: every type over the default sweep, every product checked (exit 0)" 0 \
		'"kind":"gemm_device"' 150 \
		"cuBLAS and cuBLASLt multiply right in every type at every shape of the sweep" -- \
		"$sd" gemm --local 1 $gemm --dtype all --format json
	cp "$step_out" "$OUT/gemm.jsonl"
	g=$OUT/gemm.jsonl
	check "gemm: no product of any type has a wrong element" \
		"every product matches the double-precision reference within its tolerance" \
		'grep -q "\"kind\":\"gemm\"," "$g" && ! grep "\"kind\":\"gemm\"," "$g" | grep -v "\"wrong\":0,"'
	check "gemm: every product was checked" "no product went unchecked" \
		'! grep "\"kind\":\"gemm\"," "$g" | grep "\"checked\":0,"'
	# the peer: torch.matmul on the same shapes, timed the same way
	if $py -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
		step "torch.matmul: the same types and shapes" 0 "^best " 150 \
			"the peer's TFLOPs on the same GPU and shapes" -- \
			$py "$kit/torch_matmul.py" --dtype tf32,bf16,fp16,fp8
		cp "$step_out" "$TMPD/torch_matmul.out"
		for ty in tf32 bf16 fp16 fp8; do
			mine=$(grep "\"kind\":\"gemm_device\"" "$g" | grep "\"dtype\":\"$ty\"" |
				sed -n 's/.*"best_tflops":\([0-9.]*\).*"best_shape":"\([^"]*\)".*/\1 \2/p' | head -n 1)
			theirs=$(sed -n "s/^best $ty \([0-9.]*\) \(.*\)/\1 \2/p" "$TMPD/torch_matmul.out")
			figure "gemm $ty: best TFLOPs, shakedown (cuBLAS) and torch.matmul" \
				"shakedown's $ty TFLOPs beside PyTorch's on the same GPU" \
				"$(echo "$mine" | awk '{ if (NF) printf "%.1f TFLOPs (%s %s)", $1, $2, $3 }')" \
				"$(echo "$theirs" | awk '{ if (NF) printf "%.1f TFLOPs (%s)", $1, $2 }')" \
				"$(ratio "${mine%% *}" "${theirs%% *}")"
		done
	else
		skip 1 "python3 has no torch with CUDA: no torch.matmul peer"
		emit "torch.matmul: the same types and shapes" null "" "" 0 "the peer's TFLOPs"
	fi
	case $gpuname in
	*H100* | *H200*)
		# dense bf16 989 TFLOPs (SXM): a healthy GPU is above half
		step "gemm: bf16 above half of the H100/H200 dense peak (989)" 0 "bf16 .* passed" 90 \
			"a healthy H100/H200 passes the peak verdict" -- \
			"$sd" gemm --local 1 $gemm --dtype bf16 --peak-tflops bf16=989 ;;
	*) skip 1 "not an H100 or H200: no peak to hold it to" ;;
	esac
	case $cc in
	8.0 | 8.6 | 8.7)
		step "gemm: fp8 is refused below compute capability 8.9 (exit 2)" 2 \
			"fp8 needs compute capability 8.9" 60 "fp8 is refused where the GPU has none" -- \
			"$sd" gemm --local 1 $gemm --dtype fp8 --sizes 512 --width 0 ;;
	*)
		step "gemm: fp8 runs on compute capability $cc" 0 "fp8 .* passed" 60 \
			"fp8 through cuBLASLt multiplies right" -- \
			"$sd" gemm --local 1 $gemm --dtype fp8 --sizes 4096 --width 0 ;;
	esac
	step "gemm: wrong math is caught (exit 1)" 1 "wrong math" 60 \
		"a corrupted product element fails the device" -- \
		env SHAKEDOWN_FAULT="rank=0,kind=corrupt,index=7" \
		"$sd" gemm --local 1 $gemm --dtype bf16 --sizes 512 --width 0
	step "gemm: a slow GPU is below its peak (exit 6)" 6 "below 0.50 of its peak" 60 \
		"a GPU delayed by 20 ms a call fails the peak verdict" -- \
		env SHAKEDOWN_FAULT="rank=0,kind=slow,delay_us=20000" \
		"$sd" gemm --local 1 $gemm --dtype bf16 --sizes 4096 --width 0 --peak-tflops 100
fi

# -- train: the GPU path ---------------------------------------------------
# The loss is judged against the shipped CPU curves (fp32): 1 rank with 4
# (test) or 8 (default) times the accumulation sees the global batch of
# their 2 and 4 ranks, so the config strings match.  bf16 GEMM inputs
# round to 8 significant bits; the fp32 sums and everything else keep the
# two curves close; a wrong kernel leaves the loss near ln 256 = 5.55.
SQ() { "$sq" -separator '|' "$DB" "$1"; }
if wants train; then
	group=train
	trn="$sd train --backend nccl --local 1 --no-progress --db $DB --timeout 60"
	: >"$OUT/train.txt"
	for cfgname in test default; do
		case $cfgname in test) accum=4 fall=0.5 ;; default) accum=8 fall=3 ;; esac
		step "train $cfgname: 100 steps on the GPU against gpt-$cfgname-cpu (exit 0)" 0 \
			"loss check +100 steps compared: .*: passed" 120 \
			"the GPU path's loss follows the CPU reference curve" -- \
			$trn --config $cfgname --accum $accum --steps 100 --reference gpt-$cfgname-cpu
		out=$TMPD/train-$cfgname.out
		cp "$step_out" "$out"
		{ echo "== train $cfgname"; cat "$out"; } >>"$OUT/train.txt"
		check "train $cfgname: the GPU path ran on $gpuname" "bf16 GEMMs through cuBLAS on this GPU" \
			'grep -q "GPU path: bf16 GEMMs through cuBLAS" "$out" && grep -qF "$gpuname" "$out"'
		u=$(sed -n 's/.*(run \([0-9a-f-]\{36\}\)).*/\1/p' "$out" | head -n 1)
		check "train $cfgname: 100 finite losses, falling by more than $fall nats" \
			"the loss is a number at every step and the model learns" \
			'[ "$(SQ "SELECT count(s.loss), sum(abs(s.loss) < 1e30),
			(SELECT loss FROM train_steps t WHERE t.run_id = s.run_id AND t.rank IS NULL AND t.step = 1)
			- (SELECT loss FROM train_steps t WHERE t.run_id = s.run_id AND t.rank IS NULL AND t.step = 100) > $fall
			FROM train_steps s JOIN runs r ON r.id = s.run_id
			WHERE r.uuid = '"'"'$u'"'"' AND s.rank IS NULL")" = "100|100|1" ]'
		ref=$B/share/shakedown/plans/reference/gpt-$cfgname-cpu.ref
		SQ "SELECT s.step, s.loss FROM train_steps s JOIN runs r ON r.id = s.run_id
		    WHERE r.uuid = '$u' AND s.rank IS NULL ORDER BY s.step" | tr '|' ' ' >"$TMPD/gpu-$cfgname.curve"
		worst=$(awk 'NR == FNR { if ($1 ~ /^[0-9]+$/) cpu[$1] = $2; next }
			($1 in cpu) { d = ($2 - cpu[$1]) / cpu[$1]; if (d < 0) d = -d
				if (d > w) { w = d; at = $1 }; n++ }
			END { printf "%d %.4f %d", n, w, at }' "$ref" "$TMPD/gpu-$cfgname.curve")
		check "train $cfgname: all 100 steps within 5% of the CPU curve" \
			"the curve itself, read from the database, not through the loss check" \
			'echo "$worst" | awk "{ exit !(\$1 == 100 && \$2 <= 0.05) }"' \
			"largest |gpu - cpu| / cpu $(echo "$worst" | cut -d' ' -f2) at step $(echo "$worst" | cut -d' ' -f3)"
		tgs_out=$(sed -n 's/^  tgs  *\([0-9.]*\) .*/\1/p' "$out")
		tf_out=$(sed -n 's/^  TFLOPs\/device  *\([0-9.]*\) .*/\1/p' "$out")
		check "train $cfgname: tgs from the step rows is the printed one" \
			"one truth: the printed tgs is the database's" \
			'[ -n "$tgs_out" ] && [ "$(SQ "SELECT printf('"'"'%.1f'"'"', sum(s.tokens * s.span_steps) / sum(s.step_s * s.span_steps))
			FROM train_steps s JOIN runs r ON r.id = s.run_id
			WHERE r.uuid = '"'"'$u'"'"' AND s.rank IS NULL AND s.timed")" = "$tgs_out" ]' \
			"tgs $tgs_out"
		check "train $cfgname: TFLOPs from the rows is the printed one" \
			"one truth: the printed TFLOPs is the database's" \
			'[ -n "$tf_out" ] && [ "$(SQ "SELECT printf('"'"'%.4f'"'"', t.flops_per_token * sum(s.tokens * s.span_steps)
			/ sum(s.step_s * s.span_steps) / 1e12)
			FROM train_steps s JOIN runs r ON r.id = s.run_id JOIN train_runs t ON t.run_id = r.id
			WHERE r.uuid = '"'"'$u'"'"' AND s.rank IS NULL AND s.timed")" = "$tf_out" ]' \
			"$tf_out TFLOPs/device"
		check "train $cfgname: MFU against the peak table's bf16 peak" \
			"MFU is stated against a named peak" \
			'grep -Eq "MFU +[0-9.]+% of [0-9.e]+ TFLOPs \(table" "$out"' \
			"$(sed -n 's/^  MFU  *\([0-9.]*%\).*/\1/p' "$out")"
		eval "tgs_$cfgname=\$tgs_out"
	done
	# the 1b shape: throughput where an operator's model is measured
	step "train 1b: a 1.01B-parameter shape, 12 steps (exit 0)" 0 "tgs " 150 \
		"the GPU path runs a real model's shape; its tgs and MFU" -- \
		$trn --config 1b --steps 12
	{ echo "== train 1b"; cat "$step_out"; } >>"$OUT/train.txt"
	tgs_1b=$(sed -n 's/^  tgs  *\([0-9.]*\) .*/\1/p' "$step_out")
	mfu_1b=$(sed -n 's/^  MFU  *\([0-9.]*%\).*/\1/p' "$step_out")
	tf_1b=$(sed -n 's/^  TFLOPs\/device  *\([0-9.]*\) .*/\1/p' "$step_out")
	# PyTorch eager on the same GPU and configs (bf16 autocast, the same
	# model): its tokens/s beside shakedown's tgs, a ratio to report
	if $py -c 'import numpy, torch; assert torch.cuda.is_available()' 2>/dev/null; then
		step "PyTorch eager bf16, default config" 0 "^tokens_per_s_median_step " 90 \
			"the peer's tokens/s on the same GPU and config" -- \
			$py "$kit/torch_gpt.py" --device cuda --config default \
			--accum-steps 8 --steps 30 --warmup 5
		t=$(sed -n 's/^tokens_per_s_median_step //p' "$step_out")
		figure "train default: tgs, shakedown and PyTorch eager" \
			"shakedown's GPU path beside PyTorch on the same model" \
			"${tgs_default:-?} tokens/s" "${t:-?}" "$(ratio "${tgs_default:-}" "$t")"
		step "PyTorch eager bf16, 1b config" 0 "^tokens_per_s_median_step " 150 \
			"the peer's tokens/s on the 1b shape" -- \
			$py "$kit/torch_gpt.py" --device cuda --config 1b --steps 8 --warmup 3
		t=$(sed -n 's/^tokens_per_s_median_step //p' "$step_out")
		figure "train 1b: tgs, shakedown and PyTorch eager" \
			"shakedown's GPU path beside PyTorch on a 1B shape" \
			"${tgs_1b:-?} tokens/s, ${tf_1b:-?} TFLOPs, MFU ${mfu_1b:-?}" "${t:-?}" \
			"$(ratio "${tgs_1b:-}" "$t")"
	else
		skip 1 "python3 has no torch with CUDA: no PyTorch peer"
		figure "train 1b: tgs" "shakedown's GPU path on a 1B shape" \
			"${tgs_1b:+$tgs_1b tokens/s, ${tf_1b:-?} TFLOPs, MFU ${mfu_1b:-?}}"
	fi
	step "train: two ranks on one GPU are refused (exit 3)" 3 \
		"seeing the same 1 GPU|both use GPU" 60 \
		"the training workload keeps NCCL's one-GPU-per-rank rule" -- \
		env CUDA_VISIBLE_DEVICES=0 $sd train --backend nccl --local 2 \
		--config test --steps 5 --db none --timeout 60
fi

# -- ops: every op, type and reduction on one GPU -----------------------
if wants ops; then
	group=ops
	types="int8,uint8,int32,uint32,int64,uint64,float16,bfloat16,float32,float64"
	fp8=""
	case "$cc" in 9.* | [1-9][0-9].*) fp8="fp8_e4m3,fp8_e5m2" ;; esac
	for op in all_reduce reduce_scatter reduce; do
		step "1 rank: $op, 10 types x 5 reductions, 8 B-64 MiB, checked" 0 "" 90 \
			"NCCL's $op on one GPU gives the expected bits for every type and reduction" -- \
			"$sd" run --local 1 $common --op $op -d "$types" -o all -b 8 -e 64M -f 8
		if [ -n "$fp8" ]; then
			# NCCL's one-rank path refuses avg for fp8 (ncclInvalidArgument)
			step "1 rank: $op, fp8 e4m3 and e5m2 x sum, prod, max, min, checked" 0 "" 60 \
				"fp8 reductions give the expected bits (avg: not on one rank)" -- \
				"$sd" run --local 1 $common --op $op -d "$fp8" -o sum,prod,max,min \
				-b 8 -e 64M -f 8
		fi
	done
	for op in all_gather all_to_all broadcast gather scatter sendrecv; do
		step "1 rank: $op, every type, 8 B-64 MiB, checked" 0 "" 90 \
			"NCCL's $op on one GPU moves the expected bits for every type" -- \
			"$sd" run --local 1 $common --op $op -d "$types${fp8:+,$fp8}" -b 8 -e 64M -f 8
	done
	step "1 rank: per-iteration percentiles (CUDA events)" 0 \
		"per iteration \(us\): min [0-9.]+ p50 [0-9.]+ p99 [0-9.]+ max" 60 \
		"--per-iter times each iteration with CUDA events" -- \
		"$sd" run --local 1 $common --op all_reduce -b 1M -e 256M -f 4 --per-iter
	# "# SIZE B out of place per iteration (us): min A p50 B p99 C max D":
	# the numbers after their labels, wherever the placement's words put them
	check "per-iteration percentiles: 0 < min <= p50 <= p99 <= max on every line" \
		"the percentiles are ordered" \
		'awk "/per iteration \\(us\\):/ { n++; for (i = 1; i < NF; i++) v[\$i] = \$(i + 1)
			if (!(v[\"min\"] > 0 && v[\"min\"] <= v[\"p50\"] && v[\"p50\"] <= v[\"p99\"] && v[\"p99\"] <= v[\"max\"])) { bad++; print } }
			END { exit !(n > 0 && bad == 0) }" "$step_out"'
fi

# -- faults ---------------------------------------------------------------
if wants faults; then
	group=faults
	step "wrong data is counted on the GPU (exit 1)" 1 "wrong" 60 \
		"a corrupted element is found by the check and fails the run" -- \
		env SHAKEDOWN_FAULT="rank=0,kind=corrupt,index=3" \
		"$sd" run --local 1 $common --op all_reduce -d float32 -b 1M -e 1M
	step "a hung kernel times out, NCCL is aborted, rank/host/GPU named (exit 4)" 4 \
		"rank 0 on .*GPU [0-9]+ \(.*\).*did not complete within .*aborted" 60 \
		"a hang is bounded by --timeout and names where it hung" -- \
		env SHAKEDOWN_NCCL_FAULT=hang=0 \
		"$sd" run --local 1 --backend nccl --db "$DB" --no-progress \
		--op all_reduce -b 1M -e 1M -n 5 -w 1 --timeout 5
	step "a stalled rank times out (exit 4)" 4 "" 60 \
		"a rank that stops calling is caught by the timeout" -- \
		env SHAKEDOWN_FAULT="rank=0,kind=stall" \
		"$sd" run --local 1 --backend nccl --db "$DB" --no-progress \
		--op all_reduce -b 1M -e 1M -n 5 -w 1 --timeout 5
	step "sizes beyond the GPU's memory are refused before allocating (exit 3)" 3 \
		"needs .* of buffers per rank.*lower max_bytes \(-e\)|largest size that fits is .*pass -e" 60 \
		"a plan larger than the GPU is named as memory, with the fix" -- \
		"$sd" run --local 1 $common --op all_reduce -d float32 -b 1T -e 1T
	step "two ranks on one GPU are refused (exit 3)" 3 \
		"seeing the same 1 GPU|both use GPU" 60 \
		"NCCL's one-GPU-per-rank rule is said before NCCL fails on it" -- \
		env CUDA_VISIBLE_DEVICES=0 \
		"$sd" run --local 2 $common --op all_reduce -b 8 -e 1K
fi

# -- env: a test's env reaches NCCL --------------------------------------
if wants env; then
	group=env
	printf 'tests:\n  - {op: all_reduce, max_bytes: 1M}\n  - {op: all_reduce, max_bytes: 1M, env: {NCCL_MIN_CTAS: 2, NCCL_MAX_CTAS: 4}}\n' \
		>"$TMPD/env.yaml"
	step "a test's env is its communicator's ncclConfig_t" 0 \
		"Comm config Min CTAs set to 2" 60 \
		"a plan's NCCL_* settings reach NCCL per test (init.cc parseCommConfig logs them)" -- \
		env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV \
		"$sd" run --local 1 $common --plan "$TMPD/env.yaml"
	# transport variants: each test in a worker process of its own,
	# started with its path's settings and NCCL's log; one GPU has no
	# connection to prove, and says so (shakedown-plan(5))
	printf 'tests:\n  - {op: all_reduce, max_bytes: 1M, transport: p2p}\n  - {op: sendrecv, max_bytes: 1M, transport: shm}\n  - {op: all_reduce, max_bytes: 1M, transport: tcp}\n' \
		>"$TMPD/paths.yaml"
	step "transport variants: p2p, shm and tcp in worker processes (exit 0)" 0 \
		"via p2p" 90 \
		"a test of a path runs in a worker process with that path's NCCL settings, on the GPU" -- \
		"$sd" run --local 1 $common --plan "$TMPD/paths.yaml"
	step "the 1-rank path recorded: each variant's path verdict" 0 \
		"^tcp\|skipped\|one rank: no connection to prove$" 10 \
		"the proof of the path runs on the GPU path and records its verdict" -- \
		"$sq" "$DB" "SELECT t.variant, v.status, v.reason FROM verdicts v
			JOIN tests t ON t.id = v.test_id WHERE v.expectation = 'path'
			AND v.run_id = (SELECT max(id) FROM runs) ORDER BY t.test_index"
	check "p2p, shm and tcp: skipped, saying why (one GPU)" \
		"a one-rank test has no connection to prove, and the record says so" \
		'[ "$(cut -d"|" -f1 "$step_out" | tr "\n" " ")" = "p2p shm tcp " ] &&
		 [ "$(grep -c "|skipped|one rank: no connection to prove$" "$step_out")" = 3 ]'
fi

# -- bench: nccl-tests beside shakedown -----------------------------------
if wants bench; then
	group=bench
	if [ -x "$B/nccl-tests/all_reduce_perf" ]; then
		l=$(left)
		step "nccl-tests -g 1 beside shakedown, interleaved" 0 "^Goals: " "$l" \
			"time per op and bandwidth against nccl-tests on the same GPU and NCCL" -- \
			env SHAKEDOWN="$sd" SD_COMMIT="$(sed -n 's/^commit: //p' "$B/MANIFEST")" sh "$kit/nccl_bench.sh" --build-dir "$B/nccl-tests" \
			--nccl "${SD_NCCL_DIR:-/usr/local/cuda/lib64}" --out "$OUT/nccl_bench.md" \
			--budget "$(( l - 15 ))"
		figure "nccl-tests: the goal tally" "shakedown's time and bandwidth against nccl-tests" \
			"$(grep '^Goals: ' "$OUT/nccl_bench.md" 2>/dev/null | head -n 1)"
	else
		skip 1 "the bundle has no nccl-tests (bundle.sh --no-nccl-tests)"
	fi
fi

tap_summary
done_testing
