#!/bin/sh
# plugin_kit.t - the installed plugin kit is enough to build a backend:
# the headers `make install` puts in include/shakedown/ compile a minimal
# plugin (test/system/minimal_plugin.c) with nothing from this tree, and
# shakedown loads and runs it, a test's env included.  The loader accepts
# a table from an older build when the slots it lacks are optional (and
# the core then refuses a test's env, which needs env_check), refuses one that lacks a
# slot the core needs (naming the file, both ABI tables and the slot), and
# refuses a plugin whose own name is not the backend asked for.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
: "${CC:=cc}"
command -v "${CC%% *}" >/dev/null || skip_all "no C compiler ($CC)"

inst="$TMPD/inst"
( unset MAKEFLAGS MFLAGS MAKELEVEL
  make -s -C "$top_builddir" install-pkgincludeHEADERS DESTDIR="$inst" ) \
	>"$TMPD/install.log" 2>&1
is "$?" 0 "make install of the plugin kit into a DESTDIR"
hdr=$(find "$inst" -name backend.h -path '*/shakedown/*' | head -1)
inc=$(dirname "$(dirname "$hdr")")
kit=$(cd "$inc/shakedown" 2>/dev/null && ls | sort | tr '\n' ' ')
is "$kit" "backend.h coll.h nccl_env.h pattern.h pattern_host.h train_gpu.h " \
	"the kit: the ABI, the table of collectives, the data pattern, the NCCL env table and the training table"
# each header of the kit stands alone
for h in $kit; do
	printf '#include "shakedown/%s"\nint sd_kit_probe;\n' "$h" >"$TMPD/alone.c"
	ok '$CC -std=c11 -Wall -Werror -I"$inc" -c -o "$TMPD/alone.o" "$TMPD/alone.c"' \
		"shakedown/$h compiles alone against the installed kit"
done

mkdir -p "$TMPD/plugins"
build() { # NAME [CFLAGS...]
	_n=$1; shift
	$CC -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -shared \
		-I"$inc" "$@" -o "$TMPD/plugins/backend_$_n.so" \
		"$top_srcdir/test/system/minimal_plugin.c" -lm \
		>"$TMPD/cc-$_n.log" 2>&1
}
build minimal
is "$?" 0 "a minimal plugin compiles against the installed headers alone"
diag_file "$TMPD/cc-minimal.log"

export SHAKEDOWN_PLUGIN_DIR="$TMPD/plugins"
S="$SHAKEDOWN run --no-progress --db none -b 1K -e 16K -n 2 -w 1"
run -t 120 $S --backend minimal -d all -o all
is "$rc" 0 "shakedown runs every op, type and reduction on it"
like "$out" "subjects: [0-9]+ passed; run passed" "and every check passes"
unlike "$out" "FAILED" "no wrong data"

# a test's env: the backend's env_check takes each pair before anything
# starts, and the test runs on a fresh communicator made with it
printf 'tests:\n  - {op: all_reduce}\n  - {op: all_gather, env: {NCCL_MIN_CTAS: 2}}\n  - {op: broadcast}\n' >"$TMPD/env.yaml"
run -t 60 $S --backend minimal --plan "$TMPD/env.yaml"
is "$rc" 0 "a test with an env the backend takes runs"
like "$out" "# 3 subjects: 3 passed;" \
	"the tests before, on and after the fresh communicator pass"
printf 'tests:\n  - {op: all_reduce}\n  - {op: all_gather, env: {NCCL_NET: IB}}\n' >"$TMPD/envno.yaml"
run -t 60 $S --backend minimal --plan "$TMPD/envno.yaml"
is "$rc" 2 "an env pair the backend refuses: exit 2"
like "$err" "test 2 \(all_gather\): env: the minimal backend takes only NCCL_MIN_CTAS" \
	"names the test and says why"
unlike "$out" "all_reduce" "before anything runs"

build minimalold -DSD_MINIMAL_OLD=1
is "$?" 0 "a plugin with an older table (no iter_times, no env_check) builds"
run -t 60 $S --backend minimalold --op all_reduce --per-iter
is "$rc" 0 "an older table whose missing slot is optional loads and runs"
unlike "$err" "must not be called" "the slot past its table is never called"
run -t 60 $S --backend minimalold --plan "$TMPD/env.yaml"
is "$rc" 2 "a backend without env_check refuses a test's env: exit 2"
like "$err" "test 2 \(all_gather\): env sets NCCL_MIN_CTAS, but the minimalold backend applies no NCCL settings, so the test would run without it; drop env from the test or run it with --backend nccl" \
	"names the test, the variable and the fix"

build minimalbroken -DSD_MINIMAL_OLD=2
is "$?" 0 "a plugin with a table lacking required slots builds"
run -t 60 $S --backend minimalbroken --op all_reduce
is "$rc" 3 "an older table lacking a required slot: exit 3"
like "$err" "backend_minimalbroken.so: plugin built with an older ABI [0-9]+ table \([0-9]+ bytes, up to 'wait'\) that lacks the required slot 'barrier'; this shakedown's ABI [0-9]+ table has [0-9]+ bytes" \
	"names the file, both tables and the slot"

cp "$TMPD/plugins/backend_minimal.so" "$TMPD/plugins/backend_other.so"
run -t 60 $S --backend other --op all_reduce
is "$rc" 3 "a plugin under another name: exit 3"
like "$err" "backend_other.so: the plugin says it is backend 'minimal', not 'other'" \
	"names both names"
done_testing
