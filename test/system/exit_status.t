#!/bin/sh
# exit_status.t - one list of exit statuses (issue 34): src/help/exit.txt
# is what `shakedown help exit-status` prints, what every command's --help
# ends with, shakedown(1)'s EXIT STATUS and the README's list; its numbers
# are src/tool.h's SD_EXIT_* values, no more, no fewer; the sbatch scripts
# point to it instead of keeping a list of their own.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

run "$SHAKEDOWN" help exit-status
is "$rc" 0 "help exit-status: exit 0"
list=$out
# the numbers of the list, and of the enum
listed=$(printf '%s\n' "$list" | sed -n 's/^  \([0-9]\)  .*/\1/p' | tr '\n' ' ')
enum=$(sed -n 's/^[[:space:]]*SD_EXIT_[A-Z]* = \([0-9]*\),.*/\1/p' \
	"$top_srcdir/src/tool.h" | tr '\n' ' ')
is "$listed" "$enum" "the list's statuses are src/tool.h's SD_EXIT_* values ($enum)"

# the README's list, between its markers, is the same text
readme=$(sed -n '/^<!-- exit-status: /,/^<!-- end exit-status -->$/p' \
	"$top_srcdir/README" | sed '1d;$d')
is "$readme" "$list" "the README's list is 'help exit-status' (make readme-exit-status rewrites it)"

# shakedown(1): one entry per status, generated from the same file
man=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$top_builddir/man/shakedown.1")
like "$man" "generated from .*src/help/exit.txt" "shakedown(1)'s EXIT STATUS comes from src/help/exit.txt"
is "$(printf '%s\n' "$man" | awk '/^\.TP$/ { getline; gsub(/\\f[BIRP]/, ""); print $1 }' | tr '\n' ' ')" \
	"$enum" "and has an entry for each status, in order"

# every command's --help ends with the list, and says no other
for cmd in $("$SHAKEDOWN" help | awk '/^commands:/ { on = 1; next }
		on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
	[ "$cmd" = help ] || [ "$cmd" = version ] && continue
	run "$SHAKEDOWN" help "$cmd"
	tail=$(printf '%s\n' "$out" | tail -n "$(printf '%s\n' "$list" | wc -l)")
	if [ "$rc" = 0 ] && [ "$tail" = "$list" ] &&
	   ! printf '%s\n' "$out" | grep -q "^Exit status:"; then
		pass "help $cmd ends with the list, and has no list of its own"
	else
		fail "help $cmd ends with the list, and has no list of its own (exit $rc)"
		diag "$out"
	fi
done

run "$SHAKEDOWN" help help
is "$rc" 0 "help help: exit 0 (it was 'unknown command --help')"
like "$out" "shakedown help \\[command \\| exit-status\\]" "and prints the usage, naming exit-status"

for f in "$top_srcdir"/sbatch/*.sbatch; do
	ok "grep -q \"'shakedown help exit-status' lists\" '$f' &&
	    ! grep -Eq '0 passed, 1' '$f'" \
		"$(basename "$f") points to help exit-status, with no list of its own"
done

done_testing
