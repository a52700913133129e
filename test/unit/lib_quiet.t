#!/bin/sh
# lib_quiet.t - the core never prints and never exits: in lib/ (comments
# stripped) no call of exit, _exit, abort, printf, puts, perror, fputs or
# putchar, and no use of stdout or stderr.  It returns a status and a
# message; the tool (src/) prints and picks the exit status.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
: "${CC:=cc}"
command -v "${CC%% *}" >/dev/null || skip_all "no C compiler ($CC) to strip comments"

n=0
for f in "$top_srcdir"/lib/*.c "$top_srcdir"/lib/*.h "$top_srcdir"/lib/*/*.c \
	"$top_srcdir"/lib/*/*.h; do
	[ -f "$f" ] || continue
	case $f in */schema_sql.c) continue;; esac # generated from sql/
	n=$((n + 1))
	# the compiler's preprocessor drops comments and keeps everything else
	$CC -fpreprocessed -dD -E -P -x c "$f" 2>/dev/null |
		grep -nE '(^|[^>.A-Za-z0-9_])(exit|_exit|abort|printf|puts|perror|fputs|putchar)[[:space:]]*\(|(^|[^A-Za-z0-9_])(stdout|stderr)([^A-Za-z0-9_]|$)' |
		sed "s|^|${f#$top_srcdir/}: |"
done >"$TMPD/hits"
ok "[ $n -gt 20 ]" "read the core's $n source files"
is "$(cat "$TMPD/hits")" "" "no printing, no exiting, no stdout or stderr in lib/"
done_testing
