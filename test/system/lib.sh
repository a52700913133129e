# test/system/lib.sh - TAP helpers for the shell tests (.t), sourced by each test.
#
#   plan N | skip_all "why"      announce
#   ok COND "name"               pass when COND (a shell command) succeeds
#   is GOT WANT "name"           pass when the strings are equal
#   like TEXT REGEX "name"       pass when TEXT matches the extended regex
#   run CMD...                   run with a timeout; sets $rc, $out, $err
#   $TMPD                        a private temporary folder, removed at exit
# Environment from the build: $SHAKEDOWN, $top_srcdir, $top_builddir.

set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
: "${SHAKEDOWN:=$top_builddir/src/shakedown}"
: "${SHAKEDOWN_PLUGIN_DIR:=$top_builddir/plugins/gloo/.libs:$top_builddir/plugins/nccl/.libs}"
export SHAKEDOWN SHAKEDOWN_PLUGIN_DIR
unset SHAKEDOWN_FAULT SHAKEDOWN_DB SHAKEDOWN_UPLOAD_URL SHAKEDOWN_TOKEN_FILE

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/sdtest.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
_tap_n=0
_tap_fail=0

plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
diag() { printf '# %s\n' "$@"; }

_report() { # status name
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_fail=$((_tap_fail + 1))
	fi
}

ok() {
	if eval "$1" >/dev/null 2>&1; then _report 0 "$2"; else _report 1 "$2"; fi
}

is() {
	if [ "$1" = "$2" ]; then _report 0 "$3"; else
		_report 1 "$3"; diag "got:  '$1'" "want: '$2'"; fi
}

like() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then _report 0 "$3"; else
		_report 1 "$3"; diag "no match for /$2/ in:"
		printf '%s\n' "$1" | head -20 | sed 's/^/#   /'; fi
}

unlike() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		_report 1 "$3"; diag "unexpected match for /$2/"; else _report 0 "$3"; fi
}

skip() { # count reason
	for _i in $(seq 1 "$1"); do
		_tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $2"; done
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

have_gloo() { [ -f "$top_builddir/plugins/gloo/.libs/backend_gloo.so" ]; }

done_testing() { echo "1..$_tap_n"; [ "$_tap_fail" = 0 ]; }
