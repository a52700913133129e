# test/system/lib.sh - the one TAP library for the shell tests: every .t
# sources it (directly, or through upload_lib.sh or slurm/lib.sh, which add
# only their domain helpers), and so does test/gpu/check.sh.
#
#   plan N                       announce N tests (or call done_testing)
#   skip_all "why"               "1..0 # SKIP why", then exit 0
#   bail_out "why"               "Bail out! why", then exit 1
#   ok COND "name"               pass when COND succeeds.  COND is a shell
#                                command *string*, eval'd here (quote it:
#                                ok '[ "$rc" = 0 ]' ...); its output is
#                                shown only when it fails.  A bare number
#                                (an old-style exit status) is refused:
#                                compare a status with is "$rc" 0 "name".
#   is GOT WANT "name"           pass when the strings are equal
#   isnt GOT UNWANTED "name"     pass when the strings differ
#   like TEXT REGEX "name"       pass when TEXT matches the extended regex
#   unlike TEXT REGEX "name"     pass when it does not
#   pass "name" | fail "name"    a result decided by the caller (case ...)
#   skip COUNT "why"             COUNT tests skipped
#   diag LINE...                 each line as a TAP comment ("# ...")
#   diag_file FILE               a file as TAP comments
#   tap_summary                  "# passed N, failed M" so far
#   done_testing                 the plan line if none was given; exit 0
#                                when every test passed, 1 otherwise
#   run [-t SECONDS] CMD...      run with a timeout; sets $rc, $out, $err,
#                                $secs
#   at_exit CMD                  run CMD (a string) at exit, in the order
#                                registered, before $TMPD is removed
#   $TMPD                        a private temporary folder, removed at exit
# Environment from the build: $SHAKEDOWN, $top_srcdir, $top_builddir,
# $SHAKEDOWN_PLUGIN_DIR (defaults: this checkout, built in place).

set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
: "${SHAKEDOWN:=$top_builddir/src/shakedown}"
: "${SHAKEDOWN_PLUGIN_DIR:=$top_builddir/plugins/gloo/.libs:$top_builddir/plugins/nccl/.libs}"
export SHAKEDOWN SHAKEDOWN_PLUGIN_DIR
unset SHAKEDOWN_FAULT SHAKEDOWN_DB SHAKEDOWN_UPLOAD_URL SHAKEDOWN_TOKEN_FILE

_tap_n=0
_tap_fail=0
_tap_plan=
_tap_exit_hooks=

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/sdtest.XXXXXX") || {
	echo "Bail out! cannot make a temporary folder"; exit 1; }

at_exit() {
	_tap_exit_hooks="$_tap_exit_hooks
$1"
}

_tap_at_exit() {
	_tap_rc=$?
	trap - EXIT
	eval "$_tap_exit_hooks"
	rm -rf "$TMPD"
	exit "$_tap_rc"
}
trap _tap_at_exit EXIT
# A signal ends the test through the EXIT trap, so the hooks still run.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

plan() { _tap_plan=$1; echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
bail_out() { echo "Bail out! $*"; exit 1; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
diag_file() { [ -f "$1" ] && sed 's/^/# /' "$1"; return 0; }

_report() { # status name
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_fail=$((_tap_fail + 1))
	fi
	return "$1"
}

pass() { _report 0 "$1"; }
fail() { _report 1 "$1"; }

ok() {
	case $1 in
	*[!0-9]*) ;;
	*) bail_out "ok takes a shell condition, not an exit status ('$1'):" \
		"write ok 'COND' NAME, or is \"\$rc\" 0 NAME" ;;
	esac
	if eval "$1" >"$TMPD/.ok" 2>&1; then
		_report 0 "${2-}"
	else
		_report 1 "${2-}"
		diag "failed: $1"
		head -n 20 "$TMPD/.ok" | sed 's/^/#   /'
		return 1
	fi
}

is() {
	if [ "$1" = "$2" ]; then _report 0 "$3"; else
		_report 1 "$3"; diag "got:  '$1'" "want: '$2'"; return 1; fi
}

isnt() {
	if [ "$1" != "$2" ]; then _report 0 "$3"; else
		_report 1 "$3"; diag "got '$1', which it must not be"; return 1
	fi
}

like() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then _report 0 "$3"; else
		_report 1 "$3"; diag "no match for /$2/ in:"
		printf '%s\n' "$1" | head -20 | sed 's/^/#   /'; return 1; fi
}

unlike() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		_report 1 "$3"; diag "unexpected match for /$2/"; return 1
	else _report 0 "$3"; fi
}

skip() { # count reason
	_i=0
	while [ "$_i" -lt "$1" ]; do
		_i=$((_i + 1))
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # SKIP $2"
	done
}

# run [-t SECONDS] CMD...: stdout in $out, stderr in $err, status in $rc,
# wall seconds in $secs.
run() {
	_t=120
	if [ "$1" = -t ]; then _t=$2; shift 2; fi
	_s=$(date +%s%N)
	timeout -k 5 "$_t" "$@" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	secs=$(awk -v a="$_s" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	out=$(cat "$TMPD/out")
	err=$(cat "$TMPD/err")
}

# kill_launcher PID DB: once DB has its 2 ranks' rows, wait a second (the
# ranks mid-work) and SIGKILL the launcher PID; $ranks: the ranks' PIDs
kill_launcher() {
	_n=0
	while [ $_n -lt 100 ] && [ "$(sqlite3 "$2" "SELECT count(*) FROM ranks" \
		2>/dev/null)" != 2 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	ranks=$(sqlite3 "$2" "SELECT group_concat(pid, ' ') FROM ranks")
	sleep 1
	kill -KILL "$1"
	wait "$1" 2>/dev/null
}

# wait_gone PIDS: wait up to 10 s for them to end (a rank that exited is
# gone, though nobody has reaped it yet: a zombie until init gets to
# it); $left: those still running, $n: tenths of a second waited
wait_gone() {
	left=$1
	n=0
	while [ $n -lt 100 ] && [ -n "$left" ]; do
		sleep 0.1
		n=$((n + 1))
		_still=
		for _p in $left; do
			_st=$(sed 's/.*) //' "/proc/$_p/stat" 2>/dev/null | cut -c1)
			[ -n "$_st" ] && [ "$_st" != Z ] && _still="$_still $_p"
		done
		left=$_still
	done
}

have_gloo() { [ -f "$top_builddir/plugins/gloo/.libs/backend_gloo.so" ]; }

tap_summary() { diag "passed $((_tap_n - _tap_fail)), failed $_tap_fail"; }

done_testing() {
	if [ -z "$_tap_plan" ]; then
		echo "1..$_tap_n"
	elif [ "$_tap_plan" != "$_tap_n" ]; then
		diag "planned $_tap_plan tests but ran $_tap_n"
		exit 1
	fi
	[ "$_tap_fail" = 0 ] || exit 1
	exit 0
}
