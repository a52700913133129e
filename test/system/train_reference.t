#!/bin/sh
# train_reference.t - `shakedown reference create|list|show|export|import|
# delete` and the training part of `shakedown report` on real database
# files: training runs are recorded through the real recorder by
# train_fixture (known losses and times, see its opening), a reference is
# made from three of them and its mean and spread checked per step with
# sqlite3, a file exported and imported again gives the same rows, a
# garbled file is refused naming FILE:LINE, runs of two configs are
# refused naming both; the report's numbers are the ones the fixture
# implies, in text, CSV and the JSON document; a collective run's report
# is as it was.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
plan 82
F="$top_builddir/test/system/train_fixture"
W="$top_builddir/test/system/db_writer"
DB="$TMPD/t.db"
SQ() { sqlite3 -batch "$DB" "$@"; }
# JSON questions are answered by SQLite's own JSON functions
jq() { sqlite3 -batch :memory: "SELECT $2 FROM (SELECT readfile('$1') AS j)"; }
R() { run "$SHAKEDOWN" reference "$@"; }
CFG="gpt2 layers=1 width=50 seq=100"

# three runs of one config: losses 5 - 0.01 k (- 0.5 at step 7) plus 0,
# 0.1 and 0.2; the third stops at step 10
a=$("$F" -o 0 "$DB") && b=$("$F" -o 0.1 "$DB") && c=$("$F" -o 0.2 -n 10 "$DB")
is "$?" 0 "three training runs recorded through the recorder"
is "$(SQ "SELECT group_concat(run_kind || ' ' || status, ', ') FROM runs")" \
	"train passed, train passed, train passed" "of kind train, passed"

# 1. create: per step the mean and the sample spread of the three
R create --from "$a" --from "${b%%-*}" --from "$c" --name ref3 \
	--description "three runs" --db "$DB"
is "$rc" 0 "create from three runs (one by a prefix): exit 0"
like "$out" "^reference 'ref3' created from 3 runs: 10 steps \(1 to 10\), config '$CFG'" \
	"says what it made"
like "$out" "note: the curves differ in their steps: 10 steps in all 3 are used, 2 in only some are left out" \
	"and how many steps it used of curves of different lengths"
is "$(SQ "SELECT count(*) FROM train_reference_steps s JOIN train_references r ON r.id = s.reference_id
	WHERE r.name = 'ref3' AND s.curves = 3
	AND abs(loss_mean - (5.1 - 0.01 * step - iif(step = 7, 0.5, 0))) < 1e-12
	AND abs(loss_spread - 0.1) < 1e-12")" 10 \
	"10 steps: mean 5.1 - 0.01 k (- 0.5 at 7), spread 0.1, 3 curves each"
is "$(SQ "SELECT min(step) || '-' || max(step) FROM train_reference_steps")" "1-10" \
	"steps 1 to 10: those in every run"
is "$(SQ "SELECT curves || '|' || config || '|' || description || '|' || source FROM train_references")" \
	"3|$CFG|three runs|runs $a, $b, $c" "the reference's row: curves, config, description, source"
R create --from "$a" --name ref3 --db "$DB"
is "$rc" 2 "a name that is taken: exit 2"
like "$err" "reference 'ref3' exists; delete it first" "and says what to do"
R create --from "$a" --from "$b" --name ref2 --replace --db "$DB"
is "$rc" 0 "another from two runs of the same length"
unlike "$out" "note:" "with no note: the curves agree"
R create --from "$a" --name ref2 --replace --db "$DB"
is "$rc:$(SQ "SELECT curves FROM train_references WHERE name = 'ref2'")" "0:1" \
	"--replace replaces it (now of one curve)"
is "$(SQ "SELECT count(*) FROM train_reference_steps s JOIN train_references r ON r.id = s.reference_id
	WHERE r.name = 'ref2' AND loss_spread = 0")" 12 "one curve: 12 steps, spread 0"

# 2. refusals before anything is stored
"$F" -c "gpt2 other" "$DB" > "$TMPD/d" && d=$(cat "$TMPD/d")
R create --from "$a" --from "$d" --name mixed --db "$DB"
is "$rc" 2 "runs of two configs: exit 2"
like "$err" "runs $a and $d are of different configs \('$CFG' and 'gpt2 other'\)" \
	"naming both runs and both configs"
is "$(SQ "SELECT count(*) FROM train_references WHERE name = 'mixed'")" 0 "nothing stored"
R create --from ffffffff --name x --db "$DB"
is "$rc" 2 "an unknown run: exit 2"
R create --name x --db "$DB"
is "$rc" 2 "no --from: exit 2"
like "$err" "create needs the runs or logs to make the reference from: --from RUN.*--from-log FILE" "and says so"
R create --from "$a" --name "-bad" --db "$DB"
is "$rc" 2 "a bad name: exit 2"
"$W" -q "$DB"
coll=$(SQ "SELECT uuid FROM runs WHERE run_kind = 'collectives'")
R create --from "$coll" --name x --db "$DB"
is "$rc" 2 "a collective run cannot make a reference: exit 2"
like "$err" "is not a training run" "and says why"

# 3. list and show
R list --db "$DB"
is "$rc" 0 "list: exit 0"
like "$out" "ref3 .* 3 .* 10 .* 1 .* 10 .*$CFG" "lists ref3 with its curves, steps and config"
R list --format json --db "$DB"
printf '%s\n' "$out" > "$TMPD/list.json"
is "$(jq "$TMPD/list.json" "json_array_length(j) || ' ' || json_extract(j, '\$[0].name')")" \
	"2 ref2" "list --format json: two, newest first"
R show ref3 --db "$DB"
is "$rc" 0 "show: exit 0"
like "$out" "steps +10 \(1 to 10\)" "a summary with its steps"
unlike "$out" "4\.53" "and without --steps no step"
R show ref3 --steps --db "$DB"
like "$out" "^ +7 +4\.53 +0\.1 +3$" "--steps: step 7, mean 4.53, spread 0.1, 3 curves"
R show ref3 --format json --db "$DB"
printf '%s\n' "$out" > "$TMPD/show.json"
is "$(jq "$TMPD/show.json" "json_array_length(j, '\$.steps') || ' ' || json_extract(j, '\$.steps[6].step') || ' ' || json_extract(j, '\$.steps[6].curves')")" \
	"10 7 3" "show --format json: 10 steps"
R show ref3 --format csv --db "$DB"
is "$(printf '%s\n' "$out" | head -1)|$(printf '%s\n' "$out" | wc -l)" \
	"step,loss_mean,loss_spread,curves|11" "show --format csv: a header and 10 steps"
R show nosuch --db "$DB"
is "$rc" 2 "an unknown reference: exit 2"
like "$err" "no reference 'nosuch' in the database; list them with 'shakedown reference list'" \
	"and says how to list them"

# 4. export, import under a new name: the same rows
R export ref3 -o "$TMPD/ref3.ref" --db "$DB"
is "$rc" 0 "export -o FILE: exit 0"
is "$(head -1 "$TMPD/ref3.ref")" "# shakedown-reference 1" "the file format"
R export ref3 --db "$DB"
printf '%s\n' "$out" > "$TMPD/stdout.ref"
ok 'cmp "$TMPD/ref3.ref" "$TMPD/stdout.ref"' "export to standard output writes the same"
R import "$TMPD/ref3.ref" --name ref3-copy --db "$DB"
is "$rc" 0 "import --name: exit 0"
like "$out" "reference 'ref3-copy' imported from .*ref3.ref: 10 steps \(1 to 10\)" "says what it stored"
STEPS_OF="SELECT step, loss_mean, loss_spread, s.curves FROM train_reference_steps s
	JOIN train_references r ON r.id = s.reference_id WHERE r.name ="
is "$(SQ "SELECT count(*) FROM ($STEPS_OF 'ref3' EXCEPT $STEPS_OF 'ref3-copy')") $(SQ "SELECT count(*) FROM ($STEPS_OF 'ref3-copy' EXCEPT $STEPS_OF 'ref3')") $(SQ "SELECT count(*) FROM ($STEPS_OF 'ref3-copy')")" \
	"0 0 10" "the round trip gives the same rows, bit for bit"
is "$(SQ "SELECT count(*) FROM train_references a JOIN train_references b ON a.name = 'ref3' AND b.name = 'ref3-copy'
	AND a.config = b.config AND a.source = b.source AND a.description = b.description
	AND a.created_at = b.created_at AND a.curves = b.curves")" 1 \
	"with its config, source, description, time and curves"
R import "$TMPD/ref3.ref" --db "$DB"
is "$rc" 2 "import under a name that is taken: exit 2"
R import "$TMPD/ref3.ref" --replace --db "$DB"
is "$rc" 0 "and with --replace: exit 0"
sed '10s/^\([0-9]*\)\t[^\t]*/\1\tfive/' "$TMPD/ref3.ref" > "$TMPD/bad.ref"
n=$(SQ "SELECT count(*) FROM train_references")
R import "$TMPD/bad.ref" --name bad --db "$DB"
is "$rc" 2 "a garbled file: exit 2"
like "$err" "^shakedown reference: $TMPD/bad.ref:10: mean 'five' is not a finite" \
	"naming FILE:LINE and what is wrong"
is "$(SQ "SELECT count(*) FROM train_references")" "$n" "nothing stored"
R import "$TMPD/missing.ref" --db "$DB"
is "$rc" 2 "a file that is not there: exit 2"
like "$err" "missing.ref: cannot read it" "and says so"

# 5. the report of runs judged against ref3: 0.2 and 0.5 over it at step 5
e=$("$F" -o 0.1 -b 5:0.2 -r ref3 "$DB")
is "$?" 0 "a run inside the tolerances passes"
g=$("$F" -o 0.1 -b 5:0.5 -r ref3 "$DB")
is "$?" 1 "a run outside them fails"
run "$SHAKEDOWN" report "${e%%-*}" --db "$DB"
is "$rc" 0 "report of a training run: exit 0"
rep=$out
like "$rep" "training  train, config '$CFG'" "its kind and config"
like "$rep" "devices +2 +workload" "the facts, each with where it came from"
like "$rep" "flops_per_token +6000000 +derived" "flops per token from the formula"
like "$rep" "warmup_steps +2 +given" "the warm-up, given"
like "$rep" "throughput \(9 timed step\(s\) of 12\)" "9 timed steps (after the warm-up)"
like "$rep" "tgs +4096 tokens/s/device" "tgs = 4096 / 0.5 / 2"
like "$rep" "tokens/s +8192 tokens/s" "tokens/s = 4096 / 0.5"
like "$rep" "TFLOPs +0\.024576 TFLOP/s/device" "TFLOPs = 6e6 x 4096 / 1e12"
like "$rep" "MFU +24\.576% of 0\.1 TFLOP/s/device" "MFU against the given peak"
like "$rep" "breakdown +compute 60\.0%, gradient all_reduce 20\.0%, optimizer 10\.0%, other 10\.0%" \
	"the step-time breakdown"
like "$rep" "first +5\.09 at step 1$" "the first loss"
like "$rep" "last +4\.98 at step 12$" "the last"
like "$rep" "min +4\.53 at step 7$" "the lowest, and where"
like "$rep" "against reference 'ref3' \(10 step\(s\) compared\)" "against ref3, 10 steps"
like "$rep" "variance +0\.0036 nat\^2 \(at most 0\.01\)" "variance 0.04 / 10 - 0.02^2"
like "$rep" "RMSE +0\.0632456 nat" "RMSE sqrt(0.04 / 10)"
like "$rep" "max \|diff\| +0\.2 nat at step 5" "max |diff| at step 5"
like "$rep" "verdict +passed" "passed"
unlike "$rep" "tests +0:" "no collective tests line"
run "$SHAKEDOWN" report "$g" --db "$DB"
like "$out" "verdict +failed: " "the other one failed, and why"
run "$SHAKEDOWN" report "$e" --steps --db "$DB"
like "$out" "^ *5 +1 +5\.250000 +5\.050000 +\+0\.200000 +0\.5 " "--steps: step 5 with its reference and difference"
run "$SHAKEDOWN" report "$e" --format csv --db "$DB"
is "$(printf '%s\n' "$out" | wc -l)" 13 "--format csv: a header and the 12 steps"
run "$SHAKEDOWN" report "$e" --format json --db "$DB"
printf '%s\n' "$out" > "$TMPD/e.json"
is "$(jq "$TMPD/e.json" "json_extract(j, '\$.schema_version') || ' ' || json_extract(j, '\$.run.uuid')")" \
	"1 $e" "the JSON report: schema_version 1 still, the run"
is "$(jq "$TMPD/e.json" "(SELECT group_concat(json_extract(value, '\$.name') || '=' || json_extract(value, '\$.value'), ' ') FROM json_each(j, '\$.training.metrics') WHERE json_extract(value, '\$.name') IN ('tgs', 'tokens_per_s', 'tflops', 'mfu', 'loss_max_diff_step'))")" \
	"tgs=4096.0 tokens_per_s=8192.0 tflops=0.024576 mfu=0.24576 loss_max_diff_step=5.0" \
	"training.metrics: tgs, tokens/s, TFLOPs, MFU, the step of max |diff|"
is "$(jq "$TMPD/e.json" "json_extract(j, '\$.training.verdict.result') || ' ' || json_extract(j, '\$.training.reference.name') || ' ' || json_extract(j, '\$.training.facts.devices.value') || ' ' || json_extract(j, '\$.training.facts.devices.origin') || ' ' || json_array_length(j, '\$.training.steps')")" \
	"passed ref3 2 workload 12" "training: verdict, reference, facts with origins, 12 steps"
run "$SHAKEDOWN" report "$coll" --format json --db "$DB"
printf '%s\n' "$out" > "$TMPD/c.json"
is "$(jq "$TMPD/c.json" "json_type(j, '\$.training') IS NULL AND json_array_length(j, '\$.tests') = 2")" \
	1 "a collective run's JSON report has no training member"
run "$SHAKEDOWN" report "$coll" --db "$DB"
like "$out" "subjects +2: 2 passed" "and its text report is as it was"
run "$SHAKEDOWN" report "$e" --steps --format json --db "$DB"
is "$rc" 2 "--steps with --format json: exit 2"

# 6. delete
R delete ref3-copy --db "$DB"
is "$rc:$out" "0:reference 'ref3-copy' deleted" "delete: exit 0, says so"
is "$(SQ "SELECT count(*) FROM train_references WHERE name = 'ref3-copy'") $(SQ "SELECT count(*) FROM train_reference_steps WHERE reference_id NOT IN (SELECT id FROM train_references)")" \
	"0 0" "the reference and its steps are gone"
R delete ref3-copy --db "$DB"
is "$rc" 2 "deleting it again: exit 2"

done_testing
