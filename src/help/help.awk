# src/help/help.awk - one source for each command's --help text and its
# option lists in shakedown(1), so that the two cannot drift apart.
#
#   awk -v mode=c   -f help.awk NAMES.h... CMD.txt...            > help_text.c
#   awk -v mode=man -f help.awk NAMES.h... CMD.txt... PAGE.1.in  > PAGE.1
#
# src/help/CMD.txt is what `shakedown help CMD` prints, line for line, but:
#
#   # ...      in column 1: a comment, in neither output.
#   > ...      in column 1: roff for the man page only, describing the list
#              entry above it (instead of that entry's --help text).
#   @SD_NAME@  the number of `#define SD_NAME NUMBER` in one of the .h
#              files (a trailing .0 dropped), in both outputs.  Other
#              @NAME@ (@VERSION@, @PLUGINDIR@) are left to man/man.am's
#              sed and so may appear in > lines only.
#
# A line "word:" (lower case, ending in a colon) starts a list; it ends at a
# blank line.  Each entry is a line "  LABEL TEXT": LABEL (what the user
# types: "-b, --minbytes SIZE", "RUN", "info") in columns 3-22, TEXT from
# column 24; more lines of TEXT are indented 23 spaces.  A LABEL too long
# for its columns stands alone, and its TEXT starts on the next line.
#
# mode=c prints, for each CMD.txt, `const char sd_help_CMD[]`: the whole
# text with comments and roff lines removed.  mode=man copies PAGE.1.in and
# replaces each line @CMD_WORD@ (e.g. @RUN_LAUNCH@ for the list "launch:"
# of run.txt) by that list: one .TP per entry, LABEL as the tag (options
# bold, upper-case arguments italic), the roff lines or else the --help
# TEXT as its paragraph, between two roff comments naming the source.
# A list without its placeholder, a placeholder without its list, an
# unknown @SD_NAME@, a tab, a line over 79 columns or an entry out of its
# columns is an error: nothing is printed and the exit status is 1.

function fail(msg) {
	print FILENAME ":" FNR ": " msg | "cat 1>&2"
	failed = 1
	exit 1
}

# The line with @SD_NAME@ replaced by the values of the headers.
function fill(s,    out, name) {
	out = ""
	while (match(s, /@SD_[A-Z0-9_]*@/)) {
		name = substr(s, RSTART + 1, RLENGTH - 2)
		if (!(name in value))
			fail("unknown @" name "@: no #define " name " NUMBER in " \
			     headers)
		out = out substr(s, 1, RSTART - 1) value[name]
		s = substr(s, RSTART + RLENGTH)
	}
	return out s
}

# A C string literal's body.
function cstr(s,    out, i, c, prev) {
	out = ""
	prev = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\")
			out = out "\\\\"
		else if (c == "\"")
			out = out "\\\""
		else if (c == "?" && prev == "?")
			out = out "\\?"     # no trigraphs
		else
			out = out c
		prev = c
	}
	return out
}

# Text as roff: backslashes and minus signs escaped, no request at the start.
function roff(s,    out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\")
			out = out "\\e"
		else if (c == "-")
			out = out "\\-"
		else
			out = out c
	}
	if (out ~ /^[.']/)
		out = "\\&" out
	return out
}

# A label as a roff tag: options and words bold, upper-case arguments
# italic, commas and spaces roman.
function tag(label,    n, w, i, comma, out) {
	n = split(label, w, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		comma = ""
		if (w[i] ~ /,$/) {
			comma = ","
			w[i] = substr(w[i], 1, length(w[i]) - 1)
		}
		if (w[i] ~ /^[A-Z][A-Z0-9_]*$/)
			out = out (i > 1 ? " " : "") "\\fI" w[i] "\\fR" comma
		else
			out = out (i > 1 ? " " : "") "\\fB" roff(w[i]) "\\fR" comma
	}
	return out
}

function end_entry() {
	if (entry == "")
		return
	frag[list] = frag[list] ".TP\n" tag(entry) "\n" \
		(entry_roff != "" ? entry_roff : entry_text)
	entry = ""
}

function end_list() {
	end_entry()
	if (list == "")
		return
	frag[list] = frag[list] ".\\\" end of " src ", list \"" list_word ":\"\n"
	list = ""
}

function end_help_file() {
	end_list()
	if (mode == "c")
		print ";"
}

BEGIN {
	if (mode != "c" && mode != "man") {
		print "help.awk: set mode=c or mode=man" | "cat 1>&2"
		failed = 1
		exit 1
	}
	headers = ""
	cur = ""
	if (mode == "c") {
		print "/* Generated from the src/help/CMD.txt files by src/help/help.awk; " \
		      "do not edit. */"
		print "#include <stdio.h>"
		print ""
		print "#include \"commands.h\""
	}
}

FNR == 1 {
	if (cur == "txt")
		end_help_file()
	if (FILENAME ~ /\.h$/) {
		cur = "h"
		headers = headers (headers == "" ? "" : " ") FILENAME
	} else if (FILENAME ~ /\.txt$/) {
		cur = "txt"
		cmd = FILENAME
		sub(/.*\//, "", cmd)
		sub(/\.txt$/, "", cmd)
		if (cmd !~ /^[a-z][a-z0-9_]*$/)
			fail("a help file is named after its command: " \
			     "[a-z][a-z0-9_]*.txt")
		src = "src/help/" cmd ".txt"
		list = ""
		entry = ""
		ncmd++
		if (mode == "c") {
			print ""
			print "const char sd_help_" cmd "[] ="
		}
	} else if (mode == "man" && FILENAME ~ /\.in$/) {
		cur = "in"
	} else {
		fail("not a .h, .txt or (mode=man) .in file")
	}
}

cur == "h" {
	if ($1 == "#define" && $3 ~ /^[0-9]+(\.[0-9]+)?$/ &&
	    (NF == 3 || $4 ~ /^\/[*\/]/)) {
		v = $3
		sub(/\.0+$/, "", v)
		value[$2] = v
	}
	next
}

cur == "txt" && /^#/ { next }

cur == "txt" && /^>/ {
	if (entry == "")
		fail("a '>' line belongs to a list entry above it")
	line = substr($0, 2)
	sub(/^ /, "", line)
	if (line == "")
		fail("an empty roff line; use .PP for a paragraph break")
	entry_roff = entry_roff fill(line) "\n"
	next
}

cur == "txt" {
	line = fill($0)
	if (line ~ /@[A-Z][A-Z0-9_]*@/)
		fail("@NAME@ in --help: only @SD_NAME@ values are filled there")
	if (line ~ /\t/)
		fail("a tab; --help is laid out with spaces")
	if (length(line) > 79)
		fail("longer than 79 columns")
	if (mode == "c")
		print "\t\"" cstr(line) "\\n\""

	if (line ~ /^[a-z][a-z ]*:$/) {             # a list begins
		end_list()
		list_word = substr(line, 1, length(line) - 1)
		w = list_word
		gsub(/ /, "_", w)
		list = "@" toupper(cmd) "_" toupper(w) "@"
		if (list in frag)
			fail("a second list \"" line "\"")
		frag[list] = ".\\\" generated from " src ", list \"" line \
			"\"; edit that file\n"
		listsrc[list] = src
		next
	}
	if (list == "")
		next
	if (line == "") {
		end_list()
		next
	}
	if (line ~ /^  [^ ]/) {                      # an entry
		end_entry()
		if (length(line) > 22 && substr(line, 23, 1) != " ")
			fail("a label in columns 3-22, its text from column 24 " \
			     "(or on the next line)")
		entry = substr(line, 3, 20)
		sub(/ +$/, "", entry)
		entry_text = ""
		entry_roff = ""
		text = substr(line, 24)
		sub(/^ +/, "", text)
		if (text != "")
			entry_text = roff(text) "\n"
		next
	}
	if (entry != "" && line ~ /^                       [^ ]/) {
		text = substr(line, 24)
		sub(/^ +/, "", text)
		entry_text = entry_text roff(text) "\n"
		next
	}
	fail("in list \"" list_word ":\": neither an entry (\"  LABEL TEXT\") " \
	     "nor its text (indented 23 spaces); end the list with a blank line")
}

cur == "in" && /^@[A-Z][A-Z0-9_]*@$/ {
	if (!($0 in frag))
		fail($0 ": no such list in " ncmd " help files (@CMD_LIST@, " \
		     "e.g. @RUN_LAUNCH@ for \"launch:\" in src/help/run.txt)")
	if ($0 in used)
		fail($0 " a second time")
	printf "%s", frag[$0]
	used[$0] = 1
	next
}

cur == "in" { print }

END {
	if (failed)
		exit 1
	if (cur == "txt")
		end_help_file()
	if (mode == "man") {
		for (l in frag)
			if (!(l in used)) {
				print "help.awk: the list " l " of " listsrc[l] \
				      " is not in the man page; put a line " l \
				      " where it belongs" | "cat 1>&2"
				exit 1
			}
	}
}
