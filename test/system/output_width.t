#!/bin/sh
# output_width.t - output that fits a terminal (issue 34): every line of
# `run --format short` in 80 columns and the run's summary in 80 in every
# format, with every name whole; the default table as it was (nccl_table.t
# reads it); and the live progress line: drawn and erased on a terminal
# (a pty), never on a pipe.
. "${srcdir:-.}/test/system/lib.sh"

# the longest line of a text and the first that is longer than $2
widest() { printf '%s\n' "$1" | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }'; }
over() { printf '%s\n' "$1" | awk -v b="$2" 'length($0) > b { print; exit }'; }

ops=all_reduce,reduce_scatter,all_gather,broadcast
run -t 300 $SHAKEDOWN run --local 4 --op $ops -b 1K -e 16M --format short \
	--db "$TMPD/w.db" --no-progress
is "$rc" 0 "a short run of 4 ops, 1K..16M, 4 ranks: exit 0"
is "$(over "$out" 80)" "" "every line of --format short fits 80 columns ($(widest "$out"))"
for name in "all_reduce float32 sum" "reduce_scatter float32 sum" \
	"all_gather float32" "broadcast float32 root 0"; do
	like "$out" "^# Test [0-9]+: $name, 4 ranks" "its header names $name whole"
	like "$out" "^# +[0-9]+ $name +passed " "its summary row names $name whole"
done
like "$out" "^# +size +time +algbw +busbw +#wrong +time +algbw +busbw +#wrong$" \
	"the short header: size, then time, algbw, busbw and #wrong per placement"
like "$out" "^ +16777216 +[0-9.]+ +[0-9.]+ +[0-9.]+ +0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +0$" \
	"a row: the size and both placements' columns"

# the summary block fits 80 columns in the nccl-tests table and in JSON's
# stderr; the table's rows stay nccl-tests' 118
run -t 300 $SHAKEDOWN run --local 4 --op $ops -b 1K -e 16M --db none \
	--no-progress
is "$rc" 0 "the same run as nccl-tests' table: exit 0"
summary=$(printf '%s\n' "$out" | sed -n '/^# Summary of run/,$p')
like "$summary" "^# 4 subjects: 4 passed; run passed" "the summary is there"
is "$(over "$summary" 80)" "" "its summary fits 80 columns ($(widest "$summary"))"
like "$out" "^ {8}1024 {11}256 {5}float {5}sum {6}-1 " "its rows are nccl-tests' as before"
run -t 300 $SHAKEDOWN run --local 4 --op all_reduce -b 1K -e 4K --db none \
	--format json --no-progress
is "$rc" 0 "--format json: exit 0"
is "$(over "$err" 80)" "" "its summary on stderr fits 80 columns ($(widest "$err"))"

# the progress line: on a terminal (a pty of 80 columns, stdout and stderr
# on it) drawn with \r and erased with ESC[K before each row; on a pipe
# never, unless --progress asks for it
if command -v python3 >/dev/null 2>&1; then
	cat >"$TMPD/onterm.py" <<'PY'
import fcntl, os, pty, select, struct, sys, termios
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
out = b""
while True:
    try:
        r, _, _ = select.select([fd], [], [], 120)
        d = os.read(fd, 65536) if r else b""
    except OSError:
        d = b""
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace").replace("\x1b", "ESC").replace("\r", "CR"))
sys.exit(os.waitstatus_to_exitcode(st))
PY
	run -t 300 python3 "$TMPD/onterm.py" $SHAKEDOWN run --local 4 \
		--op all_reduce -b 1K -e 16M --db none
	is "$rc" 0 "a run on a terminal: exit 0" || diag "$err"
	like "$out" "CRESC\\[K\\[1/1\\] all_reduce float32 sum 16M (out of|in) place, 10 iters \\(\\+3 warm-up\\), [0-9]+ s" \
		"the progress line names the test, op, size, placement and iterations, with the time"
	like "$out" ", ~[0-9]+ s left" "and what is left of the test"
	like "$out" "CRESC\\[K +16777216 " "a row starts on an erased line: nothing glued to it"
	unlike "$out" "s left[^C]*#" "no output follows the line on its row"
	like "$out" "^# +size +time +algbw" "a terminal narrower than the table gets --format short"
	run -t 300 python3 "$TMPD/onterm.py" $SHAKEDOWN run --local 4 \
		--op all_reduce -b 1K -e 4K --db none --no-progress --format table
	unlike "$out" "ESC\\[K" "--no-progress: no line on a terminal"
	like "$out" "^ {8}1024 {11}256 " "--format table: nccl-tests' rows on a terminal too"
else
	skip 8 "no python3 for a pty"
fi
run -t 300 $SHAKEDOWN run --local 4 --op all_reduce -b 1K -e 4K --db none
is "$rc" 0 "a run on a pipe: exit 0"
unlike "$err$out" "$(printf '\033')" "on a pipe: no progress line, no escape"
like "$out" "^ {8}1024 {11}256 " "and nccl-tests' table"
run -t 300 $SHAKEDOWN run --local 4 --op all_reduce -b 1K -e 4K --db none \
	--progress
like "$err" "$(printf '\033')\\[K\\[1/1\\] all_reduce" "--progress: the line on a pipe too"
done_testing
