#!/bin/sh
# ingest_real.t - `shakedown ingest` on real, published training logs
# (test/data/ingest/real/: Megatron-LM and Megatron-DeepSpeed stdout,
# Hugging Face Trainer and ms-swift stdout and trainer_state.json,
# LLaMA-Factory's trainer_log.jsonl and running_log.txt), each kept byte
# for byte with its source (SOURCES: repository, path, commit, sha256,
# checked here), each checked against answers computed from its raw
# bytes without shakedown's parsers (ANSWERS; the rows checked: EXPECT):
# the rows read, the first and last step, the first and last loss (to
# their printed digits), and the facts the log states.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sha256sum >/dev/null || skip_all "sha256sum is needed (coreutils)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the JSON summary"
R=$top_srcdir/test/data/ingest/real

# the summary line's field $1 (JSON), of the output in $TMPD/out
J() {
	sqlite3 -batch :memory: "SELECT json_extract(j, '\$.$1') FROM
		(SELECT readfile('$TMPD/out') AS j)"
}
# a and b the same number to the printed digits of b (1.218301E+01)
same() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d;
		m = b < 0 ? -b : b; exit !(a != "" && d <= 1e-9 * m + 1e-12) }'
}

# every file is its source's bytes
for dir in megatron hf llamafactory deepspeed; do
	[ -f "$R/$dir/SOURCES" ] || continue
	awk '/^ *file:/ { f = $2 } /^ *sha256:/ { print $2 "  " f }' \
		"$R/$dir/SOURCES" >"$TMPD/sums"
	n=$(wc -l <"$TMPD/sums" | tr -d ' ')
	run sh -c "cd '$R/$dir' && sha256sum -c --quiet '$TMPD/sums'"
	is "$rc" 0 "$dir: the $n logs are their sources' bytes (SOURCES' sha256)"
done

grep -v '^#' "$R/EXPECT" | grep . >"$TMPD/expect"
while IFS='|' read -r file args rows first last lf ll facts why; do
	name=${file#*/}
	if [ -n "$why" ]; then
		skip 1 "$name: $why"
		continue
	fi
	[ "$args" = - ] && args=
	# shellcheck disable=SC2086
	run -t 120 "$SHAKEDOWN" ingest "$R/$file" $args --db none --json
	printf '%s\n' "$out" | tail -n 1 >"$TMPD/out"
	got="$(J rows) $(J first_step) $(J last_step)"
	bad=
	[ "$rc" = 0 ] || bad="exit $rc: $(printf '%s\n' "$err" | head -n 1)"
	[ "$got" = "$rows $first $last" ] || bad="$bad; rows/first/last $got"
	# '-': the log prints no loss (DeepSpeed's engine)
	if [ "$lf" = - ]; then
		[ -z "$(J loss_first)" ] || bad="$bad; a first loss $(J loss_first)"
	else
		same "$(J loss_first)" "$lf" || bad="$bad; first loss $(J loss_first)"
	fi
	[ "$ll" = - ] || same "$(J loss_last)" "$ll" ||
		bad="$bad; last loss $(J loss_last)"
	# every line accounted for (shakedown-ingest(7)'s identity)
	sum=$(($(J lines_steps) + $(J lines_facts) + $(J lines_unparsed) +
		$(J lines_other) + $(J lines_other_runs)))
	[ "$sum" = "$(J lines)" ] || bad="$bad; lines $(J lines) != $sum"
	for f in $facts; do
		k=${f%%=*}
		v=${f#*=}
		case $k in
		runs) g=$(J runs) ;;
		unparsed) g=$(J lines_unparsed) ;;
		step_s) g=$(printf '%.4f' "$(J step_s_mean)") ;;
		*) g=$(J "facts.$k.value") ;;
		esac
		[ "$g" = "$v" ] || bad="$bad; $k $g"
	done
	is "$bad" "" "$name${args:+ ($args)}: $rows rows, steps $first-$last, loss $lf to $ll${facts:+, $facts}"
done <"$TMPD/expect"

# a flops profiler's output file alone is no training log
run -t 60 "$SHAKEDOWN" ingest "$R/deepspeed/ds_flops_profiler_output_only_llava.txt" --db none
is "$rc" 2 "a DeepSpeed flops-profiler output file alone: exit 2, no step lines"

done_testing
