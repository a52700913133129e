#!/bin/sh
# env_vars.t - every SHAKEDOWN_* variable is checked before a command
# starts (lib/envvars.c's table): a bad value is refused with exit 2 and
# one message naming the variable, the value, the accepted range and the
# fix, before any rank does work.  The table, the code that reads the
# variables and the man page's ENVIRONMENT section name the same variables.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

T=$top_srcdir/lib/envvars.c
MAN=$top_srcdir/man/shakedown.1.in
unset SHAKEDOWN_UPLOAD_BACKOFF SHAKEDOWN_UPLOAD_BACKOFF_MAX \
	SHAKEDOWN_UPLOAD_ATTEMPTS SHAKEDOWN_UPLOAD_TIMEOUT \
	SHAKEDOWN_UPLOAD_CONNECT_TIMEOUT SHAKEDOWN_CACERT SHAKEDOWN_TOKEN \
	SHAKEDOWN_IFACE SHAKEDOWN_GLOO_IFACE SHAKEDOWN_CTRL_ADDR \
	SHAKEDOWN_DB_JOURNAL SHAKEDOWN_DB_BUSY_TIMEOUT_MS SHAKEDOWN_SCONTROL \
	SHAKEDOWN_NCCL_FAULT SHAKEDOWN_LOCAL_FD SHAKEDOWN_LOCAL_RANK \
	SHAKEDOWN_LOCAL_SIZE

# -- one source: table, code and man page name the same variables --------
table=$(grep -o '"SHAKEDOWN[A-Z_]*"' "$T" | tr -d '"' | sort -u)
code=$(cat "$top_srcdir"/lib/*.c "$top_srcdir"/lib/*/*.c \
	"$top_srcdir"/src/*.c "$top_srcdir"/src/*/*.c \
	"$top_srcdir"/plugins/*/*.c "$top_srcdir"/plugins/*/*.cc |
	grep -o '"SHAKEDOWN_[A-Z_]*[A-Z]"' | tr -d '"' | sort -u)
man=$(awk '/^\.SH ENVIRONMENT/{on=1; next} /^\.SH/{on=0}
	on && /^\.BR? /' "$MAN" | grep -o 'SHAKEDOWN[A-Z_]*' | sort -u)
missing=$(printf '%s\n' "$code" | grep -vxF "$table")
is "$missing" "" "every SHAKEDOWN_* variable the code reads is in the table"
is "$man" "$table" "the man page's ENVIRONMENT section names the table's variables"

# -- each checked variable's bad value, in a real run ---------------------
# (SHAKEDOWN_PLUGIN_DIR, _PLAN_DIR, _BLAS, _DB, _TOKEN and the sbatch
# scripts' three take any text: they have no bad value to test)
bad() { # VAR=VALUE range-text
	var=${1%%=*}
	run -t 60 env "$1" "$SHAKEDOWN" run --local 2 --db "$TMPD/r.db" \
		-b 8 -e 8
	is "$rc" 2 "$1: exit 2"
	is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "$1: one line"
	like "$err" "^shakedown: $var" "$1: the message names the variable"
	like "$err" "$2" "$1: the accepted range and the fix"
	is "$out" "" "$1: no rank started"
	ok '[ ! -e "$TMPD/r.db" ]' "$1: nothing recorded"
}
bad SHAKEDOWN_UPLOAD_BACKOFF=0 \
	"='0': not accepted; it takes seconds, a number above 0 and at most 3600: set it to such a value \(1\), or unset it"
bad SHAKEDOWN_UPLOAD_BACKOFF=abc "='abc'.*above 0 and at most 3600"
bad SHAKEDOWN_UPLOAD_BACKOFF_MAX=-1 "='-1'.*above 0 and at most 3600"
bad SHAKEDOWN_UPLOAD_TIMEOUT=1e9 "='1e9'.*above 0 and at most 86400"
bad SHAKEDOWN_UPLOAD_CONNECT_TIMEOUT=soon "='soon'.*at most 3600"
bad SHAKEDOWN_UPLOAD_ATTEMPTS=0 "='0'.*a whole number from 1 to 100"
bad SHAKEDOWN_UPLOAD_URL=ftp://127.0.0.1/ "not an http:// or https:// URL"
bad SHAKEDOWN_TOKEN_FILE=$TMPD/none "no such file; it takes a readable file"
bad SHAKEDOWN_CACERT=$TMPD "not a regular file; it takes a readable PEM"
bad SHAKEDOWN_DB_BUSY_TIMEOUT_MS=junk "from 0 to 3600000"
bad SHAKEDOWN_DB_JOURNAL=wal "='wal'.*it takes delete"
bad SHAKEDOWN_IFACE=eth0/1 "a network interface name, 1 to 15 characters"
bad SHAKEDOWN_GLOO_IFACE=averyveryverylongname "1 to 15 characters"
bad SHAKEDOWN_CTRL_ADDR=rank0 "a dotted IPv4 address"
bad SHAKEDOWN_SCONTROL=$TMPD/none "a program on PATH, or the path of an executable"
bad SHAKEDOWN_NCCL_FAULT=hang "it takes hang=RANK"
bad SHAKEDOWN_FAULT=rank=x "cannot use 'rank=x'.*or unset SHAKEDOWN_FAULT"
bad SHAKEDOWN_LOCAL_FD=x "set by --local only: unset it"
bad SHAKEDOWN_LOCAL_RANK=-1 "set by --local only: unset it"
bad SHAKEDOWN_LOCAL_SIZE=0 "set by --local only: unset it"

# -- an upload against nothing: refused up front, never lost --------------
run -t 60 env SHAKEDOWN_UPLOAD_BACKOFF=0 "$SHAKEDOWN" run --local 2 \
	--db "$TMPD/u.db" -b 8 -e 8 --upload http://127.0.0.1:9/
is "$rc" 2 "run --upload, SHAKEDOWN_UPLOAD_BACKOFF=0: exit 2, not 0"
ok '[ ! -e "$TMPD/u.db" ]' "run --upload: refused before the run"
run -t 60 env SHAKEDOWN_UPLOAD_BACKOFF=abc "$SHAKEDOWN" upload --pending \
	--db "$TMPD/u.db" --url http://127.0.0.1:9/
is "$rc" 2 "upload --pending, SHAKEDOWN_UPLOAD_BACKOFF=abc: exit 2"
like "$err" "SHAKEDOWN_UPLOAD_BACKOFF='abc'" "upload names the variable"

# help still works under a bad setting
run -t 30 env SHAKEDOWN_UPLOAD_ATTEMPTS=x "$SHAKEDOWN" help run
is "$rc" 0 "help is not refused for a bad setting"

# a good value is taken
run -t 60 env SHAKEDOWN_UPLOAD_BACKOFF=0.5 SHAKEDOWN_DB_JOURNAL=delete \
	"$SHAKEDOWN" run --local 2 --db none -b 8 -e 8
is "$rc" 0 "good values: the run runs"

done_testing
