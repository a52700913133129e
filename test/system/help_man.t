#!/bin/sh
# help_man.t - `shakedown help CMD` and shakedown(1) cannot drift apart: both
# come from src/help/CMD.txt.  For every command: the entries of its --help
# lists and the .TP tags of its lists in the built man page are the same, in
# the same order; every option of its usage lines is listed; every option
# listed is one the command accepts; `CMD --help` prints the same text.  In
# the whole man page, every .TP tag that is an option (starts with -) comes
# from one of those lists, and no placeholder is left.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

MAN=$top_builddir/man/shakedown.1
[ -f "$MAN" ] || skip_all "no $MAN (make builds it)"

# roff tags as text: font macros, fonts and quotes dropped, escapes undone
deroff() {
	sed -e 's/^\.[BIR][BIR]* //' -e 's/"//g' -e 's/\\f[BIRP]//g' \
	    -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\&//g'
}

# The labels of --help's lists: after a line "word:", up to a blank line,
# each line "  LABEL  TEXT" with LABEL in columns 3-22.
help_labels() {
	awk '/^[a-z][a-z ]*:$/ { inlist = 1; next }
	     /^$/ { inlist = 0 }
	     inlist && /^  [^ ]/ { l = substr($0, 3, 20); sub(/ +$/, "", l); print l }'
}

# The tags of the man page's lists generated from src/help/$1.txt.
man_labels() {
	awk -v src="src/help/$1.txt" '
	     index($0, ".\\\" generated from " src ",") == 1 { inlist = 1; next }
	     index($0, ".\\\" end of " src ",") == 1 { inlist = 0; next }
	     inlist && tag { print; tag = 0; next }
	     inlist && $0 == ".TP" { tag = 1 }' "$MAN" | deroff
}

# the commands, as `shakedown help` lists them; help and version have no
# options
run "$SHAKEDOWN" help
cmds=$(printf '%s\n' "$out" | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' |
	grep -v -x -e help -e version)
like "$(echo $cmds)" "^run .*upload" "shakedown help lists the commands"

cd "$TMPD" || exit 1
for c in $cmds; do
	run "$SHAKEDOWN" help "$c"
	is "$rc" 0 "$c: help exits 0"
	help=$out
	run "$SHAKEDOWN" "$c" --help
	is "$out" "$help" "$c: 'shakedown $c --help' prints the same as 'help $c'"

	# (without the exit statuses every command's help ends with:
	# src/help/exit.txt, exit_status.t)
	hl=$(printf '%s\n' "$help" | sed '/^exit status:$/,$d' | help_labels)
	ml=$(man_labels "$c")
	isnt "$hl" "" "$c: --help lists its options"
	is "$ml" "$hl" "$c: shakedown(1) lists what --help lists, in order"

	# every option of the usage lines is in the lists
	opts=$(printf '%s\n' "$hl" | tr ' ,' '\n\n' | grep -e '^-' | sort -u)
	used=$(printf '%s\n' "$help" | sed -n '/^usage:/,/^$/p' |
		grep -o -e '--[a-z][-a-z_]*' | sort -u)
	missing=$(printf '%s\n' "$used" | grep -e . | grep -v -x -F -e "$opts" |
		tr '\n' ' ')
	is "$missing" "" "$c: every option of its usage lines is listed"

	# every option listed is accepted (whatever its value then does)
	bad=""
	printf '%s\n' "$hl" > "$TMPD/labels"
	while read -r label; do
		case $label in -*) ;; *) continue;; esac
		arg=$(printf '%s\n' "$label" | tr ' ' '\n' | grep -x '[A-Z][A-Z0-9_]*' | head -1)
		for o in $(printf '%s\n' "$label" | tr ' ,' '\n\n' | grep -e '^-'); do
			case $o in -h|--help) continue;; esac
			# run: -b above -e stops it once the options are read
			set -- "$o" ${arg:+X}
			[ "$c" = run ] && set -- "$@" -b 2K -e 1K
			# gemm: nothing to measure stops it likewise
			[ "$c" = gemm ] && set -- "$@" --sizes none --width 0
			# train: no step to take stops it likewise
			[ "$c" = train ] && set -- "$@" --steps 0
			# topo has no database: its ranks start and stop
			case $c in run|topo) ;;
			*) set -- "$@" --db "$TMPD/missing.db" ;;
			esac
			run -t 30 "$SHAKEDOWN" "$c" "$@"
			case $err in *"unknown option"*) bad="$bad $o";; esac
			[ "$rc" -lt 124 ] || bad="$bad $o(timed out)"
		done
	done < "$TMPD/labels"
	is "$bad" "" "$c: every option --help lists is accepted"
done

# no option is documented in the man page by hand, outside those lists
stray=$(awk 'index($0, ".\\\" generated from src/help/") == 1 { inlist = 1 }
	     index($0, ".\\\" end of src/help/") == 1 { inlist = 0 }
	     tag { if (!inlist) print; tag = 0; next }
	     $0 == ".TP" { tag = 1 }' "$MAN" | deroff | grep -e '^-' | tr '\n' ' ')
is "$stray" "" "shakedown(1) documents options only in lists from src/help/"
unlike "$(cat "$MAN")" "@[A-Z][A-Z0-9_]*@" "shakedown(1) has no placeholder left"

if command -v groff >/dev/null; then
	w=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
	is "$w" "" "groff reads shakedown(1) without a warning"
else
	skip 1 "groff is not installed"
fi

done_testing
