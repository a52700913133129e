#!/bin/sh
# run_plan.t - the plan carries the run: every setting of the tests (check
# passes, per-iteration timing, in place or not, how times combine, the
# timeout, the scope) is in the plan text that is recorded and hashed, so
# two runs that differ in one of them differ in their recorded plan.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to read the database"

DB="$TMPD/plan.db"
S="$SHAKEDOWN run --no-progress --local 2 --op all_reduce -b 1K -e 1K -n 2 -w 0 --db $DB"
last() { sqlite3 -batch "$DB" "SELECT $1 FROM runs ORDER BY id DESC LIMIT 1"; }

run -t 60 $S
is "$rc" 0 "a plain run: exit 0"
base_text=$(last plan_text)
base_hash=$(last plan_hash)
like "$base_text" "check: 1, per_iter: false, in_place: true, combine: avg, timeout: 60, scope: world" \
	"the defaults are in the recorded plan"
for opt in "-c 2" "-T 7" "--per-iter" "--no-in-place" "-a max"; do
	run -t 60 $S $opt
	is "$rc" 0 "$opt: exit 0"
	isnt "$(last plan_hash)" "$base_hash" "$opt changes the plan's hash"
	isnt "$(last plan_text)" "$base_text" "$opt changes the recorded plan"
done
like "$(sqlite3 -batch "$DB" "SELECT group_concat(plan_text, '|') FROM runs" | tr '\n' ' ')" \
	"check: 2.*timeout: 7.*per_iter: true.*in_place: false.*combine: max" \
	"each setting shows in its run's plan"

# the same settings from a plan file give the same plan as the options
cat >"$TMPD/p.yaml" <<'YAML'
defaults: {check: 2, timeout: 7, per_iter: true, in_place: false, combine: max}
tests:
  - {op: all_reduce, min_bytes: 1K, max_bytes: 1K, iters: 2, warmup: 0}
YAML
run -t 60 $SHAKEDOWN run --no-progress --local 2 --plan "$TMPD/p.yaml" --db "$DB"
is "$rc" 0 "settings from a plan file: exit 0"
like "$(last plan_text)" "check: 2, per_iter: true, in_place: false, combine: max, timeout: 7, scope: world" \
	"are recorded the same way"
run -t 60 $SHAKEDOWN run --no-progress --local 2 --plan "$TMPD/p.yaml" \
	--db "$DB" -c 0
like "$(last plan_text)" "check: 0," "an option still overrides the plan file"

# bad values in a plan are refused with file:line
printf 'tests:\n  - {op: all_reduce, combine: mean}\n' >"$TMPD/bad.yaml"
run -t 30 $SHAKEDOWN run --local 2 --plan "$TMPD/bad.yaml" --db none
is "$rc" 2 "a bad combine: exit 2"
like "$err" "bad.yaml:2: combine 'mean' must be avg, min, max or rank0" \
	"names the file, line and value"
printf 'tests:\n  - {op: all_reduce, timeout: soon}\n' >"$TMPD/bad.yaml"
run -t 30 $SHAKEDOWN run --local 2 --plan "$TMPD/bad.yaml" --db none
is "$rc" 2 "a bad timeout: exit 2"
like "$err" "timeout 'soon' must be a positive number of seconds" "says why"

# the shipped example, as its header says to run it: the default backend
run -t 240 "$SHAKEDOWN" run --local 4 --plan "$top_srcdir/plans/example.yaml" \
	--db none
is "$rc" 0 "run --local 4 --plan plans/example.yaml: exit 0 on Gloo"
unlike "$err" "NCCL" "no NCCL setting refused"
done_testing
