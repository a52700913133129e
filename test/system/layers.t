#!/bin/sh
# layers.t - no layer reaches into a layer above it: the core library
# (lib/) needs no symbol of the tool (src/), no file under lib/ includes
# from src/ or plugins/, and no plugin includes a private header of lib/
# (a plugin sees the core only through the installed kit,
# include/shakedown/).  Each rule is also run on a planted breach, so it
# is seen to fail.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

# includes_up ROOT: the lines under ROOT/lib that include from src/ or
# plugins/ (by path, or by "../" out of lib/)
includes_up() {
	grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*/)?(src|plugins)/|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' \
		--include='*.c' --include='*.h' --include='*.cc' "$1/lib" 2>/dev/null
}
# plugin_private ROOT: the lines of a plugin that include a header that is
# neither its own (beside it), config.h, the kit's (shakedown/...) nor a
# system one (<...>)
plugin_private() {
	for d in "$1"/plugins/*/; do
		[ -d "$d" ] || continue
		grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' \
			"$d"*.c "$d"*.cc "$d"*.cu "$d"*.h 2>/dev/null |
			while IFS= read -r line; do
				f=${line%%:*}
				h=$(printf '%s\n' "$line" | sed 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/')
				case $h in config.h | shakedown/*) continue ;; esac
				[ -f "$(dirname "$f")/$h" ] && continue
				printf '%s\n' "$line"
			done
	done
}

cd "$top_srcdir" || bail_out "cannot cd to $top_srcdir"
up=$(includes_up .)
is "$up" "" "no file under lib/ includes from src/ or plugins/"
priv=$(plugin_private .)
is "$priv" "" "no plugin includes a private header of lib/ (only its own, config.h and shakedown/)"

# the rules fail on a planted breach
p=$TMPD/planted
mkdir -p "$p/lib/train" "$p/plugins/x" "$p/src"
printf '#include "util.h"\n#include "../plugins/nccl/nccl_host.h"\n' >"$p/lib/a.c"
printf '#include "../src/tool.h"\n' >"$p/lib/train/b.c"
printf '#include "shakedown/backend.h"\n#include "own.h"\n#include "train/gpt.h"\n' >"$p/plugins/x/x.c"
: >"$p/plugins/x/own.h"
up=$(includes_up "$p")
ok 'printf "%s\n" "$up" | grep -q "lib/a.c:2:" && printf "%s\n" "$up" | grep -q "lib/train/b.c:1:" && [ "$(printf "%s\n" "$up" | grep -c .)" = 2 ]' \
	"planted: lib/ including plugins/ and src/ is found, its own header is not"
priv=$(plugin_private "$p")
ok 'printf "%s\n" "$priv" | grep -q "x.c:3:.*train/gpt.h" && [ "$(printf "%s\n" "$priv" | grep -c .)" = 1 ]' \
	"planted: a plugin including train/gpt.h is found, shakedown/ and its own are not"

# the library's undefined sd_/cmd_ symbols are all defined in it
a=$top_builddir/lib/.libs/libshakedown.a
if ! command -v nm >/dev/null 2>&1; then
	skip 3 "nm not found (binutils)"
elif [ ! -f "$a" ]; then
	skip 3 "$a not built"
else
	need=$(nm -u "$a" 2>/dev/null | awk '{print $NF}' | grep -E '^(sd_|cmd_)' | sort -u)
	have=$(nm --defined-only "$a" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRCVW]/ {print $3}' | sort -u)
	missing=$(printf '%s\n' "$need" | comm -23 - "$(printf '%s\n' "$have" >"$TMPD/have"; echo "$TMPD/have")")
	ok '[ -n "$need" ]' "the library uses its own sd_ symbols across files ($(printf '%s\n' "$need" | grep -c .) of them)"
	is "$missing" "" "every sd_/cmd_ symbol libshakedown.a needs, it defines (none from src/)"
	# planted: an object that needs a symbol of the tool
	printf 'extern int cmd_history(int, char **);\nint sd_planted(void) { return cmd_history(0, 0); }\n' >"$TMPD/planted.c"
	if ${CC:-cc} -c -o "$TMPD/planted.o" "$TMPD/planted.c" 2>/dev/null; then
		cp "$a" "$TMPD/lib.a" && ar r "$TMPD/lib.a" "$TMPD/planted.o" 2>/dev/null
		need=$(nm -u "$TMPD/lib.a" 2>/dev/null | awk '{print $NF}' | grep -E '^(sd_|cmd_)' | sort -u)
		have=$(nm --defined-only "$TMPD/lib.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRCVW]/ {print $3}' | sort -u)
		printf '%s\n' "$have" >"$TMPD/have2"
		missing=$(printf '%s\n' "$need" | comm -23 - "$TMPD/have2")
		is "$missing" "cmd_history" "planted: an object needing cmd_history is found"
	else
		skip 1 "no C compiler to plant an object"
	fi
fi
done_testing
