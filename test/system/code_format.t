#!/bin/sh
# code_format.t - the C files laid out by clang-format with the tree's
# .clang-format stay so (clang-format --dry-run -Werror).  They are the
# files the job lifecycle work wrote anew; the older files are not run
# through it (why: .clang-format's own comment).  The check is also run
# on a planted breach, so it is seen to fail.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
command -v clang-format >/dev/null ||
	skip_all "clang-format not installed (apt-get install clang-format)"
cd "$top_srcdir" || bail_out "cannot cd to $top_srcdir"

FORMATTED="src/commands.c src/commands.h src/job_options.c src/job_options.h
src/main.c src/run.h src/cmd_worker.c lib/worker.c lib/worker.h
lib/transport.c lib/transport.h lib/measure.c lib/measure.h
lib/nccl_transport.c lib/nccl_transport.h lib/path_proof.c lib/path_proof.h
lib/switches.c lib/switches.h"

for f in $FORMATTED; do
	run clang-format --style=file --dry-run -Werror "$f"
	is "$rc" 0 "$f is laid out as .clang-format says"
done

# a planted breach: two statements on one line and a brace out of place
cp .clang-format "$TMPD/.clang-format"
printf 'int f(int a) {\n  return a; }\n' >"$TMPD/bad.c"
run clang-format --style=file --dry-run -Werror "$TMPD/bad.c"
isnt "$rc" 0 "a file laid out otherwise is found"

done_testing
