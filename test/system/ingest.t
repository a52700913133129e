#!/bin/sh
# ingest.t - `shakedown ingest` and `reference create --from-log` on the
# fixture logs of test/data/ingest/ (written to each framework's format,
# with the known answers of their READMEs), into real SQLite files:
# tgs, TFLOPs and MFU as the fixtures imply them, and recomputed from the
# recorded rows with SQL; where each fact came from; a log every 10 steps;
# the loss against a reference made from a log (passing, diverging, NaN);
# garbled and truncated logs named by FILE:LINE; --strict; usage errors;
# and a database locked through the ingest: exit 7, nothing half written,
# the whole run in the journal and in the database after `db recover`.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command missing (apt-get install sqlite3)"
plan 161
D="$top_srcdir/test/data/ingest"
DB="$TMPD/i.db"
SQ() { sqlite3 -batch "$DB" "$@"; }
# a JSON question, answered by SQLite's JSON functions over $TMPD/out
J() { sqlite3 -batch :memory: "SELECT $1 FROM (SELECT readfile('$TMPD/out') AS j)"; }
I() { run "$SHAKEDOWN" ingest "$@"; }
H100="NVIDIA H100 80GB HBM3"

# == 1. LLaMA-Factory: tgs, TFLOPs, MFU, facts, the record ================
# 8 GPUs, 49152 tokens and 3 s a step: tgs 2048; Llama-3-8B at seq 2048:
# 6 x 8030261248 + 12 x 32 x 4096 x 2048 = 51402792960 FLOPs per token
I "$D/llamafactory_trainer_log.jsonl" --gpus 8 --seq-len 2048 \
	--model-config "$D/config_llama3_8b.json" --device "$H100" --db "$DB" --json
is "$rc" 0 "llamafactory log: exit 0"
is "$(J "json_extract(j, '$.format') || ' ' || json_extract(j, '$.variant')")" \
	"llamafactory trainer_log.jsonl" "sniffed as LLaMA-Factory's trainer_log.jsonl"
is "$(J "json_extract(j, '$.tgs')")" 2048 "tgs 49152 / 3 s / 8 GPUs = 2048"
is "$(J "json_extract(j, '$.flops_per_token')")" 51402792960 \
	"FLOPs per token 6N + 12 L h s from the model config"
is "$(J "printf('%.6f', json_extract(j, '$.tflops'))")" \
	"$(awk 'BEGIN { printf "%.6f", 2048 * 51402792960 / 1e12 }')" \
	"TFLOPs per device = tgs x FLOPs per token"
is "$(J "printf('%.9f', json_extract(j, '$.mfu') * json_extract(j, '$.peak_tflops') / json_extract(j, '$.tflops'))")" \
	"1.000000000" "MFU = TFLOPs / the peak table's"
is "$(J "json_extract(j, '$.facts.devices.origin') || json_extract(j, '$.facts.params.origin') || json_extract(j, '$.facts.layers.origin') || json_extract(j, '$.facts.device.origin')")" \
	"givenderivedreadgiven" "devices given, params derived from the config, layers read, device given"
is "$(J "json_extract(j, '$.facts.params.value')")" 8030261248 "Llama-3-8B: 8,030,261,248 parameters"
is "$(J "json_extract(j, '$.rows') || ' ' || json_extract(j, '$.timed_rows') || ' ' || json_extract(j, '$.lines_unparsed')")" \
	"100 97 0" "100 rows, 97 timed (the first never, 2 warm-up), none unparsed"
run1=$(J "json_extract(j, '$.run')")
like "$err" "results recorded in $DB \\(run $run1\\)" "says where it is recorded (stderr with --json)"
is "$(SQ "SELECT r.run_kind || ' ' || r.status || ' ' || t.log_format || ' ' || t.lines_unparsed || ' ' || t.config FROM runs r JOIN train_runs t ON t.run_id = r.id WHERE r.uuid = '$run1'")" \
	"ingest passed llamafactory 0 log" "recorded: kind ingest, passed, its format, no line lost, config 'log'"
is "$(SQ "SELECT count(*) FROM train_steps s JOIN runs r ON r.id = s.run_id WHERE r.uuid = '$run1' AND s.rank IS NULL")" \
	100 "every row is a step row"
# recomputed with SQL from the rows alone
is "$(SQ "SELECT printf('%.6f', sum(s.tokens * s.span_steps) / sum(s.step_s * s.span_steps) / t.devices)
	FROM train_steps s JOIN train_runs t ON t.run_id = s.run_id JOIN runs r ON r.id = s.run_id
	WHERE r.uuid = '$run1' AND s.timed AND s.rank IS NULL")" "2048.000000" \
	"tgs recomputed from the recorded rows agrees"
is "$(SQ "SELECT printf('%.6f', value) FROM train_metrics m JOIN runs r ON r.id = m.run_id WHERE r.uuid = '$run1' AND m.name = 'tgs'")" \
	"2048.000000" "and the tgs metric row says it"

# the text summary says where each value came from
I "$D/llamafactory_trainer_log.jsonl" --gpus 8 --seq-len 2048 \
	--model-config "$D/config_llama3_8b.json" --device "$H100" --db none
is "$rc" 0 "text summary: exit 0"
like "$out" "devices +8 \\(given\\)" "devices: given"
like "$out" "params +8030261248 \\(derived from --model-config\\)" "params: derived from the config"
like "$out" "tgs +2048\\.0 tokens/s/device" "tgs in words"
like "$out" "MFU +[0-9.]+% of [0-9.]+ TFLOPs \\(table: NVIDIA H100 SXM5\\)" "MFU against the table's H100 SXM5"
unlike "$out" "results recorded" "--db none: never says recorded"

# == 2. a reference from a log, and logs judged against it ===============
run "$SHAKEDOWN" reference create --from-log "$D/llamafactory_trainer_log.jsonl" --name lf --db "$DB"
is "$rc" 0 "reference create --from-log: exit 0"
like "$out" "reference 'lf' created from 1 log: 100 steps \\(1 to 100\\), config 'log'" "says what it made"
is "$(SQ "SELECT source FROM train_references WHERE name = 'lf'")" \
	"logs $D/llamafactory_trainer_log.jsonl" "its source names the log"
is "$(SQ "SELECT printf('%.4f %.4f', (SELECT loss_mean FROM train_reference_steps s JOIN train_references r ON r.id = s.reference_id WHERE r.name = 'lf' AND step = 1), (SELECT loss_mean FROM train_reference_steps s JOIN train_references r ON r.id = s.reference_id WHERE r.name = 'lf' AND step = 100))")" \
	"3.0000 2.0100" "its curve is the log's: 3.00 at step 1 to 2.01 at step 100"

# a reference from a log needs no recorded run: a new database is made
run "$SHAKEDOWN" reference create --from-log "$D/hf_trainer_state.json" --name golden --db "$TMPD/refs.db"
is "$rc" 0 "reference create --from-log into a database not there yet: exit 0"
is "$(sqlite3 "$TMPD/refs.db" "SELECT name || ' ' || config FROM train_references")" "golden log" \
	"the database is made, with the reference"

# trainer_state.json has the same losses: variance 0, passed
I "$D/hf_trainer_state.json" --gpus 8 --tokens-per-step 49152 --reference lf --db "$DB" --json
is "$rc" 0 "HF trainer_state.json against it: exit 0"
is "$(J "json_extract(j, '$.format') || ' ' || json_extract(j, '$.variant') || ' ' || json_extract(j, '$.loss_check') || ' ' || json_extract(j, '$.steps_compared') || ' ' || json_extract(j, '$.loss_var')")" \
	"hf trainer_state.json passed 100 0" "hf, 100 steps compared, variance 0: passed"
is "$(J "json_extract(j, '$.tgs') || ' ' || json_extract(j, '$.facts.tokens_per_step.origin')")" \
	"2048 given" "tgs 2048 with the tokens per step given"
hfrun=$(J "json_extract(j, '$.run')")
is "$(SQ "SELECT t.verdict || ' ' || t.reference_name FROM train_runs t JOIN runs r ON r.id = t.run_id WHERE r.uuid = '$hfrun'")" \
	"passed lf" "the verdict and its reference are recorded"

# every 10 steps: rows weighted by their spans; 10 steps compared, said
I "$D/llamafactory_every10.jsonl" --gpus 8 --tokens-per-step 49152 --reference lf --db "$DB" --json
is "$rc" 0 "a log every 10 steps: exit 0"
is "$(J "json_extract(j, '$.rows') || ' ' || json_extract(j, '$.timed_rows') || ' ' || json_extract(j, '$.timed_steps') || ' ' || json_extract(j, '$.tgs')")" \
	"10 8 80 2048" "10 rows; 8 timed standing for 80 steps; tgs 2048"
is "$(J "json_extract(j, '$.steps_compared') || ' ' || json_extract(j, '$.loss_check')")" \
	"10 passed" "10 steps compared with the reference: a shifted curve passes"
like "$(J "json_extract(j, '$.loss_note')")" "10 " "and the note says how many steps it used"

# the text form of the same says how many steps were compared
I "$D/llamafactory_every10.jsonl" --gpus 8 --tokens-per-step 49152 --reference lf --db "$DB"
like "$out" "loss check +10 steps compared: .*: passed \\(steps 10 to 100\\)" "text: 10 steps compared, 10 to 100"
like "$out" "note +.*10" "text: the note"

# a NaN loss: exit 1 naming the step
I "$D/llamafactory_nan.jsonl" --gpus 8 --reference lf --db "$DB"
is "$rc" 1 "a NaN loss at step 37: exit 1"
like "$err" "loss became NaN at step 37 of $D/llamafactory_nan.jsonl" "names the step and the log"
like "$out" "loss check +nonfinite: loss became NaN at step 37" "the loss check says it"
is "$(SQ "SELECT r.status || ' ' || t.nonfinite_step FROM runs r JOIN train_runs t ON t.run_id = r.id ORDER BY r.id DESC LIMIT 1")" \
	"failed 37" "recorded as failed at step 37"

# a log judged against the built-in workload's reference: refused
I "$D/hf_trainer_state.json" --gpus 8 --tokens-per-step 49152 --db none \
	--reference "$top_srcdir/plans/reference/gpt-test-cpu.ref"
is "$rc" 2 "a log against a built-in workload's reference: exit 2"
like "$err" "reference create --from-log" "says how a log's reference is made"

# a recorded ingest run makes a reference too
run "$SHAKEDOWN" reference create --from "$hfrun" --name from-run --db "$DB"
is "$rc" 0 "reference create --from an ingest run: exit 0"
like "$out" "created from 1 run: 100 steps \\(1 to 100\\), config 'log'" "its config is the log's"
run "$SHAKEDOWN" reference create --from "$hfrun" --from-log "$D/hf_trainer_state.json" --name mixed --db "$DB"
is "$rc" 2 "runs and logs together: exit 2"
like "$err" "not both" "says to give one or the other"

# == 2b. Megatron-LM and DeepSpeed =======================================
# megatron.log says its devices and sequence length itself
I "$D/megatron.log" --model-config "$D/config_llama3_8b.json" --reference lf --db "$DB" --json
is "$rc" 0 "Megatron-LM log: exit 0"
is "$(J "json_extract(j, '$.format') || ' ' || json_extract(j, '$.tgs') || ' ' || json_extract(j, '$.facts.devices.origin') || ' ' || json_extract(j, '$.facts.seq_len.origin') || ' ' || printf('%.4f', json_extract(j, '$.tflops')) || ' ' || json_extract(j, '$.logged_tflops')")" \
	"megatron 2048 read read 105.2729 105.3" "tgs 2048 from what the log says alone; TFLOPs beside the log's own"
is "$(J "json_extract(j, '$.lines') || ' ' || json_extract(j, '$.lines_steps') || ' ' || json_extract(j, '$.lines_facts') || ' ' || json_extract(j, '$.lines_unparsed') || ' ' || json_extract(j, '$.lines_other')")" \
	"121 103 10 2 6" "121 lines: 103 steps, 10 facts, 2 unparsed, 6 other"
is "$(J "json_extract(j, '$.unparsed[0].line') || ' ' || json_extract(j, '$.unparsed[1].line')")" "45 75" \
	"the garbled iteration lines 45 and 75"
is "$(J "json_extract(j, '$.loss_check') || ' ' || json_extract(j, '$.steps_compared') || ' ' || json_extract(j, '$.loss_var')")" \
	"passed 98 0" "against the LLaMA-Factory curve: 98 steps, variance 0"
I "$D/megatron.log" --gpus 16 --db none
like "$out" "note: --gpus 16 given; the log says 8" "a given fact that differs from the log's is said"
like "$out" "tgs +1024\\.0" "and used: tgs 1024 on 16 devices"
I "$D/megatron_every10.log" --reference lf --db "$DB" --json
is "$(J "json_extract(j, '$.tgs') || ' ' || json_extract(j, '$.timed_steps') || ' ' || json_extract(j, '$.steps_compared') || ' ' || json_extract(j, '$.loss_check')")" \
	"2048 80 10 passed" "Megatron every 10 iterations: tgs 2048 over 80 steps, 10 compared"
I "$D/megatron_nan.log" --reference lf --db "$DB"
is "$rc" 1 "a NaN iteration: exit 1"
like "$err" "loss became NaN at step 37" "at step 37"
I "$D/megatron_diverge.log" --reference lf --db "$DB"
is "$rc" 6 "a diverging loss: exit 6"
like "$err" "the loss is off the reference lf" "off the reference"
like "$out" "loss check .*: failed" "the loss check fails"
is "$(SQ "SELECT r.status || ' ' || t.verdict FROM runs r JOIN train_runs t ON t.run_id = r.id ORDER BY r.id DESC LIMIT 1")" \
	"failed failed" "recorded as failed"
I "$D/megatron_truncated.log" --db none
is "$rc" 0 "a log cut inside its last line: judged on the rest"
like "$out" "megatron_truncated.log:64: the last line is cut off" "the cut line named"
I "$D/deepspeed.log" --seq-len 2048 --reference lf --db "$DB" --json
is "$(J "json_extract(j, '$.format') || ' ' || json_extract(j, '$.tgs') || ' ' || json_extract(j, '$.facts.params.value') || ' ' || json_extract(j, '$.facts.params.origin') || ' ' || json_extract(j, '$.loss_check')")" \
	"deepspeed 2048 124440000 read passed" "DeepSpeed: tgs 2048, params from the flops profiler, the loss passes"
I "$D/deepspeed_every10.log" --gpus 8 --seq-len 2048 --db none --json
is "$(J "json_extract(j, '$.tgs') || ' ' || json_extract(j, '$.rows') || ' ' || (json_extract(j, '$.loss_first') IS NULL)")" \
	"2048 10 1" "DeepSpeed without the pipeline: rows from the ThroughputTimer, no loss"
I "$D/deepspeed_every10.log" --gpus 8 --seq-len 2048 --reference lf --db "$DB"
is "$rc" 2 "a log without losses against a reference: exit 2"
like "$err" "no step of this run has a loss to compare" "says there is no loss to judge"

# == 3. the Trainer's stdout: no step numbers, a garbled dict ============
I "$D/hf_stdout.log" --gpus 8 --tokens-per-step 49152 --db none --json
is "$rc" 0 "HF stdout: exit 0"
is "$(J "json_extract(j, '$.variant') || ' ' || json_extract(j, '$.rows') || ' ' || json_extract(j, '$.first_step') || ' ' || json_extract(j, '$.last_step') || ' ' || json_extract(j, '$.lines_unparsed')")" \
	"stdout 9 10 100 1" "9 rows, steps 10 to 100 (logging every 10, from the run's length), 1 unparsed"
is "$(J "json_extract(j, '$.unparsed[0].line')")" 8 "the garbled dict is line 8"
I "$D/hf_stdout.log" --gpus 8 --tokens-per-step 49152 --db none
like "$out" "unparsed $D/hf_stdout.log:8: .*learning_rate" "text: FILE:LINE and why"
like "$out" "19 lines: 9 steps, 1 facts, 1 unparsed, 8 other" "every line is counted"
# 4.x stdout has no length: its cadence must be given
I "$D/hf_stdout_v4.log" --db none
is "$rc" 2 "stdout without a cadence: exit 2"
like "$err" "no step numbers .*give --log-every N" "says to give --log-every"
I "$D/hf_stdout_v4.log" --log-every 1 --db none
is "$rc" 1 "with --log-every 1: the NaN at row 3 is exit 1"
like "$err" "loss became NaN at step 3" "naming step 3"

# == 4. garbled and truncated logs =======================================
I "$D/llamafactory_garbled.jsonl" --gpus 8 --db none
is "$rc" 0 "a log with 3 bad lines: judged on the rest, exit 0"
like "$out" "21 lines: 18 steps, 0 facts, 3 unparsed, 0 other" "3 unparsed of 21 lines"
like "$out" "garbled.jsonl:5: not JSON" "line 5 named"
like "$out" "garbled.jsonl:12: not JSON: unexpected token near ','" "line 12 named, with why"
like "$out" "garbled.jsonl:21: the last line is cut off" "the cut-off last line named"
I "$D/llamafactory_garbled.jsonl" --gpus 8 --db "$DB" --strict
is "$rc" 2 "--strict: exit 2"
like "$err" "--strict: 3 lines of .*garbled.jsonl did not parse, the first .*garbled.jsonl:5" "naming the first bad line"
is "$(SQ "SELECT count(*) FROM train_runs WHERE log_path LIKE '%garbled%'")" 0 "a refused log is not recorded"
I "$D/llamafactory_garbled.jsonl" --gpus 8 --db "$DB"
is "$(SQ "SELECT lines_unparsed FROM train_runs WHERE log_path LIKE '%garbled%'")" 3 \
	"recorded with its 3 unparsed lines"
I "$D/hf_truncated.json" --db "$DB"
is "$rc" 2 "a truncated trainer_state.json: exit 2"
like "$err" "hf_truncated.json:304:10: not valid JSON" "names FILE:LINE:COLUMN"
I "$D/llamafactory_trainer_log.jsonl" --format hf --db none
is "$rc" 2 "a log read as the wrong format: exit 2"
like "$err" "llamafactory" "says which format it is"

# == 5. bad options ======================================================
I --db none
is "$rc" 2 "no log: exit 2"
like "$err" "which log\\?" "asks for the log"
I "$D/hf_trainer_state.json" "$D/hf_stdout.log" --db none
is "$rc" 2 "two logs: exit 2"
like "$err" "one log at a time" "says one at a time"
I "$D/hf_trainer_state.json" --gpus 0 --db none
is "$rc" 2 "--gpus 0: exit 2"
like "$err" "--gpus '0' must be a number of devices above 0" "says what --gpus must be"
I "$D/hf_trainer_state.json" --params 8B --model-config "$D/config_gpt2.json" --db none
is "$rc" 2 "--params with --model-config: exit 2"
like "$err" "give one" "says to give one"
I "$D/hf_trainer_state.json" --format nemo --db none
is "$rc" 2 "an unknown format: exit 2"
like "$err" "megatron, deepspeed, hf or llamafactory" "lists the formats"
I "$D/hf_trainer_state.json" --model-config "$D/config_mixtral.json" --db none
is "$rc" 2 "an MoE config: exit 2"
like "$err" "num_local_experts.*--params" "names the key and --params"
I "$TMPD/missing.log" --db none
is "$rc" 2 "a log that is not there: exit 2"
like "$err" "missing.log: cannot open" "names it"
printf 'shopping list\n- milk\n' >"$TMPD/notes.txt"
I "$TMPD/notes.txt" --db none
is "$rc" 2 "a file of no known format: exit 2"
like "$err" "not a log shakedown knows.*give --format" "says to give --format"
# bad input: a folder, a FIFO nobody writes, random bytes, one 10 MB line
mkdir "$TMPD/afolder"
I "$TMPD/afolder" --db none
is "$rc" 2 "a folder: exit 2"
like "$err" "afolder: is a folder; give the training job's log file" "says so"
mkfifo "$TMPD/afifo"
run -t 10 "$SHAKEDOWN" ingest "$TMPD/afifo" --db none
is "$rc" 2 "a FIFO with no writer: exit 2, not a hang"
like "$err" "afifo: the file is empty" "read as empty"
# a stream without end: bounded, refused, the fix named
run -t 30 "$SHAKEDOWN" ingest /dev/zero --db none
is "$rc" 2 "/dev/zero: exit 2, not memory without end"
like "$err" "/dev/zero: not a file, and longer than 64 MiB.*write the log to a file first" \
	"says a stream is read whole and what to do"
run -t 30 "$SHAKEDOWN" reference create --from-log /dev/zero --name z --db "$TMPD/z.db"
is "$rc" 2 "reference create --from-log /dev/zero: exit 2"
like "$err" "not a file, and longer than 64 MiB" "the same reason"
head -c 100000 /dev/urandom >"$TMPD/random.bin"
I "$TMPD/random.bin" --db none
is "$rc" 2 "random bytes: exit 2"
like "$err" "not a log shakedown knows" "no format's"
awk 'BEGIN { s = "x"; while (length(s) < 10000000) s = s s; print s }' >"$TMPD/oneline.log"
run -t 60 "$SHAKEDOWN" ingest "$TMPD/oneline.log" --format megatron --db none
is "$rc" 2 "one line of 16 MB: exit 2"
like "$err" "no iteration lines of Megatron-LM .*1 lines read" "no step in it, said"
I "$D/hf_trainer_state.json" --params 8B --gpus 8 --tokens-per-step 512K --db none --json
is "$(J "json_extract(j, '$.facts.params.value') || ' ' || json_extract(j, '$.facts.tokens_per_step.value')")" \
	"8000000000 512000" "--params 8B and --tokens-per-step 512K read as powers of 1000"

# == 6. report shows an ingest run =======================================
run "$SHAKEDOWN" report "$run1" --db "$DB"
is "$rc" 0 "report of an ingest run: exit 0"
like "$out" "ingest" "says it is an ingested log"
like "$out" "llamafactory" "and its format"

# == 7. never half recorded ============================================
# a lock held past the busy timeout when the ingest starts: refused
# before anything is written, saying what to do
if command -v python3 >/dev/null; then
	python3 -c '
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
start = time.time()
while not os.path.exists(sys.argv[2]) and time.time() - start < 120:
    time.sleep(0.02)
db.execute("ROLLBACK")
' "$DB" "$TMPD/release" >"$TMPD/held" 2>&1 &
	holder=$!
	for _ in $(seq 100); do grep -q held "$TMPD/held" 2>/dev/null && break; sleep 0.05; done
	before=$(SQ "SELECT count(*) FROM runs")
	SHAKEDOWN_DB_BUSY_TIMEOUT_MS=200 I "$D/llamafactory_trainer_log.jsonl" --gpus 8 --db "$DB"
	: >"$TMPD/release"
	wait "$holder"
	ok 'grep -q held "$TMPD/held"' "another process held the write lock"
	is "$rc" 3 "the database locked: exit 3"
	like "$err" "database is locked by another process for more than 200 ms; retry later" \
		"says so and what to do"
	unlike "$out" "results recorded" "never says recorded"
	is "$(SQ "SELECT count(*) FROM runs")" "$before" "nothing was written"
else
	skip 5 "python3 is needed to hold a lock"
fi

# the file damaged where the steps go: the write fails whole, the run is
# kept in the journal (exit 7), and `db recover --into` gives it back whole
DDB=$TMPD/damaged.db
I "$D/hf_trainer_state.json" --gpus 8 --tokens-per-step 49152 --db "$DDB"
is "$rc" 0 "a first ingest into a new database: exit 0"
root=$(sqlite3 "$DDB" "SELECT rootpage FROM sqlite_schema WHERE name = 'train_steps'")
psize=$(sqlite3 "$DDB" "PRAGMA page_size")
head -c "$psize" /dev/urandom | dd of="$DDB" bs="$psize" seek=$((root - 1)) conv=notrunc 2>/dev/null
I "$D/llamafactory_trainer_log.jsonl" --gpus 8 --db "$DDB"
is "$rc" 7 "the steps' table damaged: exit 7"
like "$err" "the record in $DDB is incomplete: the run itself, 100 steps, its end and metrics could not be written .*kept in the journal $DDB\\.[0-9a-f-]{36}\\.run-[0-9a-f-]{36}\\.pending\\.sql" \
	"says what is missing and where it is kept"
unlike "$out" "results recorded" "never says recorded"
SENT=$(printf '%s\n' "$err" | sed -n 's/^shakedown: \(the record in .*\)$/\1/p')
ok 'printf "%s\n" "$out" | grep -qF -- "exit status 7: $SENT"' \
	"stdout says the same sentence, with exit status 7"
is "$(sqlite3 "$DDB" "SELECT count(*) FROM runs")" 1 "no half run in the file: only the first one"
run "$SHAKEDOWN" db recover --db "$DDB" --into "$TMPD/new.db"
is "$rc" 0 "db recover --into: exit 0"
is "$(sqlite3 "$TMPD/new.db" "SELECT count(*) FROM train_steps s JOIN runs r ON r.id = s.run_id JOIN train_runs t ON t.run_id = r.id WHERE t.log_format = 'llamafactory' AND s.rank IS NULL") $(sqlite3 "$TMPD/new.db" "SELECT count(*) FROM train_metrics m JOIN train_runs t ON t.run_id = m.run_id WHERE t.log_format = 'llamafactory' AND m.name = 'tgs'")" \
	"100 1" "the recovered run is whole: 100 steps and its metrics"

# two processes appending to one trainer_log.jsonl: the first one's rows,
# a warning naming the other's lines; ms-swift's logging.jsonl is hf's
{
	for s in 10 20 30 40; do
		printf '{"current_steps": %d, "loss": %s, "elapsed_time": "0:0%d:00"}\n' \
			"$s" "1.$s" "$((s / 10))"
		printf '{"current_steps": %d, "loss": %s, "elapsed_time": "0:0%d:01"}\n' \
			"$s" "1.$((s + 1))" "$((s / 10))"
	done
} >"$TMPD/two_writers.jsonl"
I "$TMPD/two_writers.jsonl" --db none
is "$rc" 0 "two processes' rows in one trainer_log.jsonl: exit 0"
like "$out" "8 lines: 4 steps, 0 facts, 0 unparsed, 4 other
.*#   warning: two writers' rows interleaved \(two processes appended to one file\): the first one's read; the other's 4 not used, 0 copies of the first's and 4 with another loss" \
	"the first one's 4 rows read, the other's 4 lines named in a warning"
I "$TMPD/two_writers.jsonl" --db none --json
like "$out" "\"notes\":\\[.*\"warning: two writers' rows interleaved" \
	"--json: the warning among the notes"
printf '%s\n' '{"loss": 2.0, "global_step/max_steps": "1/20", "elapsed_time": "5s", "train_speed(iter/s)": 0.2}' \
	'{"loss": 1.5, "global_step/max_steps": "10/20", "elapsed_time": "50s", "train_speed(iter/s)": 0.2}' \
	'{"loss": 1.2, "global_step/max_steps": "20/20", "elapsed_time": "1m 40s", "train_speed(iter/s)": 0.2}' \
	>"$TMPD/logging.jsonl"
I "$TMPD/logging.jsonl" --db none
is "$rc" 0 "ms-swift's logging.jsonl: exit 0"
like "$out" "# ingest: hf log .*logging.jsonl \(logging.jsonl\): 3 lines: 3 steps" \
	"sniffed as hf, 3 rows"

# == --global-batch (issue 32): DeepSpeed's timer without a batch =========
# DeepSpeed-Chat prints no configuration block: its ThroughputTimer lines
# give samples/s, and the batch comes from --global-batch.  A generated log:
# 3 rows at 64 samples/s; with G = 32 a step is 0.5 s, 32 x 512 tokens on 4
# GPUs: tgs 8192 (the one timed row: 30, after the warm-up)
for s in 10 20 30; do
	printf '[2023-04-18 01:46:59,171] [INFO] [timer.py:199:stop] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=64.0, CurrSamplesPerSec=64.0, MemAllocated=3.96GB, MaxMemAllocated=22.95GB\n' "$s" "$s"
done >"$TMPD/dsnobatch.log"
I "$TMPD/dsnobatch.log" --db none
is "$rc" 2 "a DeepSpeed log that never states its batch, no --global-batch: exit 2"
like "$err" "never states train_batch_size.*give --global-batch N" "says to give --global-batch"
I "$TMPD/dsnobatch.log" --global-batch 32 --seq-len 512 --gpus 4 --db none --json
is "$rc" 0 "with --global-batch 32: exit 0"
printf '%s\n' "$out" | tail -n 1 >"$TMPD/out"
is "$(J "json_extract(j, '$.rows') || ' ' || json_extract(j, '$.step_s_mean') || ' ' || json_extract(j, '$.tgs')")" \
	"3 0.5 8192" "3 rows, a step 32 / 64 = 0.5 s, tgs 32 x 512 / 0.5 / 4 = 8192"
like "$(J "json_extract(j, '$.notes')")" "global batch 32 from --global-batch \\(the log states none\\)" \
	"the note says where the batch came from"
# the configuration says 64: a given 32 wins for the tokens, the note says
# both; the time stays the log's own (64 / 64 samples/s = 1 s)
{
	printf '[2023-04-18 01:46:50,000] [INFO] [config.py:983:print] DeepSpeedEngine configuration:\n'
	printf '[2023-04-18 01:46:50,000] [INFO] [config.py:987:print]   train_batch_size ............. 64\n'
	cat "$TMPD/dsnobatch.log"
} >"$TMPD/dsbatch.log"
I "$TMPD/dsbatch.log" --global-batch 32 --db none --json
printf '%s\n' "$out" | tail -n 1 >"$TMPD/out"
is "$rc $(J "json_extract(j, '$.step_s_mean')")" "0 1" "the log's batch: exit 0, its own step time kept"
like "$(J "json_extract(j, '$.notes')")" "--global-batch 32 given; the log says 64" \
	"a --global-batch the log contradicts: used, the note says both"
I "$TMPD/dsbatch.log" --global-batch 64 --db none
like "$out" "note: --global-batch 64 given; the log says the same" "the same as the log's: said"
for bad in 0 -8 1.5 12x ""; do
	I "$TMPD/dsnobatch.log" --global-batch "$bad" --db none
	is "$rc" 2 "--global-batch '$bad': exit 2"
done
like "$err" "--global-batch '' must be the sequences of one optimizer step over all ranks" \
	"says what --global-batch must be"

# == the "give --tokens-per-step" hint only where it was not given ==========
for f in hf_trainer_state.json llamafactory_every10.jsonl; do
	I "$D/$f" --gpus 8 --tokens-per-step 49152 --db none
	unlike "$out" "give --tokens-per-step" "$f, --tokens-per-step given: no hint to give it"
	like "$out" "note: .*taken from --tokens-per-step" "$f: the note says where the tokens came from"
done
I "$D/llamafactory_every10.jsonl" --gpus 8 --db none
like "$out" "tokens not logged: give --tokens-per-step, or --global-batch and --seq-len" \
	"without it: the hint is given"
I "$D/llamafactory_every10.jsonl" --gpus 8 --global-batch 12 --seq-len 4096 --db none
unlike "$out" "give --tokens-per-step" "--global-batch and --seq-len given: no hint"

# == report: a warm-up the user did not give is the default, not "given" ====
I "$D/hf_trainer_state.json" --gpus 8 --tokens-per-step 49152 --db "$TMPD/w.db"
run "$SHAKEDOWN" report --db "$TMPD/w.db"
like "$out" "warmup_steps +2 +default" "report: the default warm-up says default"
unlike "$out" "warmup_steps +2 +given" "report: and not given"
I "$D/hf_trainer_state.json" --gpus 8 --tokens-per-step 49152 --warmup 3 --db "$TMPD/w.db"
run "$SHAKEDOWN" report --db "$TMPD/w.db"
like "$out" "warmup_steps +3 +given" "report: --warmup 3 says given"
