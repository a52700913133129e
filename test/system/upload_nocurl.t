#!/bin/sh
# upload_nocurl.t - a shakedown built without libcurl (configure
# --without-curl, or no libcurl4-openssl-dev) says so clearly: sending
# exits 3 with how to fix it, `run --upload` refuses before any test runs
# (exit 3), and `upload --list` still reads the outbox.  Skipped in builds with
# libcurl (the other upload tests cover those).

UPLOAD_WITHOUT_CURL_OK=1
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/upload_lib.sh"
upload_setup
[ "$NOCURL" = 1 ] || skip_all "built with libcurl"
can_run || skip_all "shakedown run --local does not work here (no backend built)"
msg="built without libcurl; install libcurl4-openssl-dev and rebuild"

run_sd run run --local 2 --op all_reduce -b 1K -e 4K --db "$tmp/b.db" \
	--upload http://127.0.0.1:1/
is "$RC" 3 "run --upload: refused before the run"
case $ERR in *"$msg"*) pass "saying how to get upload";;
	*) fail "saying how to get upload"; diag "$ERR";; esac
run_sd run0 run --local 2 --op all_reduce -b 1K -e 4K --db "$tmp/a.db"
is "$RC" 0 "a run without --upload records the run"
run_sd one upload latest --url http://127.0.0.1:1/ --db "$tmp/a.db"
is "$RC" 3 "upload RUN: exit 3"
case $ERR in *"$msg"*) pass "with the message";;
	*) fail "with the message"; diag "$ERR";; esac
run_sd pending upload --pending --db "$tmp/a.db"
is "$RC" 3 "upload --pending: exit 3"
run_sd list upload --list --db "$tmp/a.db"
is "$RC" 0 "upload --list works"
done_testing
