#!/bin/sh
# run_cli.t - the command line: commands, help, version, and one clear line
# with exit status 2 for every bad option; a missing or mismatched plugin
# is exit 3 naming the file.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

usage_error() { # description, then the command's arguments
	name=$1; shift
	run "$SHAKEDOWN" "$@"
	is "$rc" 2 "$name: exit status 2"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$name: one line"
}

run "$SHAKEDOWN"
is "$rc" 2 "no command: exit 2"
like "$err" "usage: shakedown <command>" "no command: usage on stderr"
run "$SHAKEDOWN" frob
is "$rc" 2 "unknown command: exit 2"
like "$err" "unknown command 'frob'" "unknown command named"
run "$SHAKEDOWN" --version
is "$rc" 0 "--version: exit 0"
like "$out" "^shakedown [0-9]+\.[0-9]+\.[0-9]+$" "--version prints the version"
run "$SHAKEDOWN" help
like "$out" "run +run a test plan" "help lists the commands"
run "$SHAKEDOWN" help run
is "$rc" 0 "help run: exit 0"
like "$out" "--local N" "help run shows the options"
run "$SHAKEDOWN" help frob
is "$rc" 2 "help for an unknown command: exit 2"

usage_error "unknown option" run --bogus
like "$err" "unknown option '--bogus'" "unknown option named"
usage_error "bad size" run -b 1X
like "$err" "-b '1X' is not a size" "bad size named"
usage_error "misspelt op" run --op allreduce
like "$err" "unknown op 'allreduce'; did you mean 'all_reduce'\?" "did you mean"
usage_error "min above max" run -b 1M -e 1K
usage_error "zero ranks" run --local 0
usage_error "bad format" run --format xml
usage_error "missing value" run -n
like "$err" "needs a value" "missing value named"
usage_error "bad data type" run -d float33
like "$err" "did you mean 'float32'" "data type hint"
usage_error "stray argument" run all_reduce
SHAKEDOWN_FAULT=rank=x usage_error "bad fault spec" run --local 1
like "$err" "SHAKEDOWN_FAULT" "bad fault spec named"

run "$SHAKEDOWN" run --local 2 --backend nosuch --db none
is "$rc" 3 "missing backend: exit 3"
like "$err" "backend 'nosuch' not found" "missing backend named"
is "$(printf '%s\n' "$err" | wc -l)" 1 "missing backend: one line"

SHAKEDOWN_PLUGIN_DIR="$top_builddir/test/system/.libs" \
	run "$SHAKEDOWN" run --local 1 --backend badabi --db none
is "$rc" 3 "plugin of another ABI: exit 3"
like "$err" "backend_badabi.so: plugin ABI version 1000, but this shakedown needs ABI version 2" \
	"ABI mismatch names the file and both versions"

done_testing
