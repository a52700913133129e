#!/bin/sh
# shell_syntax.t - every shell script of the tree parses (sh -n, or bash -n
# for a #!/bin/bash script): the tests, their libraries, the GPU check, the
# job scripts, the quick start and the bench driver.  A test that skips here
# (upload_nocurl.t in a build with libcurl) is still read in full, so a
# syntax error cannot hide behind the skip.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

cd "$top_srcdir" || bail_out "cannot cd to $top_srcdir"
files=$(ls test/system/*.t test/system/*.sh test/system/slurm/*.sh \
	test/unit/*.t test/gpu/*.sh sbatch/*.sbatch bench/*.sh quickstart.sh .ci/run \
	2>/dev/null)
[ -n "$files" ] || skip_all "no shell scripts found in $top_srcdir"
for f in $files; do
	case $(head -n 1 "$f") in
	'#!'*bash*) sh=bash ;;
	*) sh=sh ;;
	esac
	if [ "$sh" = bash ] && ! command -v bash >/dev/null 2>&1; then
		skip 1 "$f: bash not found"
		continue
	fi
	ok '$sh -n "$f"' "$f parses ($sh -n)"
done
done_testing
