#!/bin/sh
# run_oom.t - memory is named as memory, never as a bad node (issue 33):
# in a memory cgroup of its own, (a) a reduce_scatter that the old check
# (2 buffers a rank) let through is refused before any buffer, with the
# measured factor (4); (b) a rank that the kernel's OOM killer kills (the
# cgroup's limit lowered after the check passed) is reported as the OOM
# killer's victim with what the test needed, the run exits 3, and its host
# is not recorded as a suspect; a rank that SIGKILLs itself (no OOM kill
# counted) is still a lost rank.  Needs root and a memory cgroup it can
# make (v1, or v2 with memory delegated); at most about 600 MiB at once.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
have_gloo || skip_all "the Gloo plugin was not built (libgloo-dev missing)"

cg="" limit=""
if [ -w /sys/fs/cgroup/memory ] &&
   mkdir "/sys/fs/cgroup/memory/sdoom.$$" 2>/dev/null; then
	cg=/sys/fs/cgroup/memory/sdoom.$$
	limit=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
     mkdir "/sys/fs/cgroup/sdoom.$$" 2>/dev/null; then
	cg=/sys/fs/cgroup/sdoom.$$
	limit=memory.max
fi
[ -n "$cg" ] || skip_all "no memory cgroup can be made here (needs root and a writable cgroup v1 memory controller, or v2 with memory delegated)"
# the processes left in it are ours: end them by their ids, then remove it
at_exit "for p in \$(cat '$cg/cgroup.procs' 2>/dev/null); do kill -9 \$p; done; sleep 1; rmdir '$cg' 2>/dev/null"
if ! echo $((1 << 30)) >"$cg/$limit" 2>/dev/null; then
	skip_all "the memory cgroup's limit cannot be set"
fi
in_cg="echo \$\$ >'$cg/cgroup.procs' && exec"

# (a) 200M reduce_scatter, 2 ranks, 1 GiB: 2 x 2 x 200M = 800M passed the
# old check; it takes 4 x 200M a rank (bench/README-memory.md)
run -t 120 sh -c "$in_cg $SHAKEDOWN run --no-progress --local 2 --op reduce_scatter -b 200M -e 200M -n 1 -w 0 --db '$TMPD/a.db'"
is "$rc" 3 "a 200M reduce_scatter of 2 ranks in 1 GiB: exit 3, before allocating"
like "$err" "test 1 \\(reduce_scatter up to 209715200 bytes\\) needs ~896M of memory per rank \\(4 x its 200M buffer, as measured with Gloo, \\+10% and 16M\\), ~1.8G for the 2 ranks on [^,]+, which has [0-9.]+[KMG] available; lower max_bytes \\(-e\\) or run fewer ranks per host" \
	"names the test, the sizes, the host and the fix"
unlike "$err$out" "was lost|killed by" "no rank is lost or killed"

# (b) the check passes at 1 GiB (test 2: ~298M a rank, ~595M for 2); once
# the run has started (its row is in the database), the limit drops to
# 400M, which test 2's 256M a rank fits for one rank but not for two, and
# rank VICTIM is made the OOM killer's choice (oom_score_adj; rank 0's pid
# is in the record).  The survivor fits alone; but the kernel sometimes
# kills it too, 4 ms after the victim, before the victim's memory is
# uncharged (seen 2 runs in 10; a survivor's oom_score_adj cannot be
# lowered without CAP_SYS_RESOURCE), and then no rank is left to record:
# that run is not the case tested, and is run again (5 tries)
cat >"$TMPD/oom.yaml" <<EOF
tests:
  - {op: all_reduce, dtype: float32, min_bytes: 1K, max_bytes: 1K, iters: 20, warmup: 0}
  - {op: reduce_scatter, dtype: float32, min_bytes: 64M, max_bytes: 64M, iters: 1, warmup: 0}
EOF
oom_run() { # victim db
	echo $((1 << 30)) >"$cg/$limit"
	SHAKEDOWN_FAULT=rank=0,kind=slow,op=all_reduce,delay_us=150000 \
		sh -c "$in_cg $SHAKEDOWN run --no-progress --local 2 --plan '$TMPD/oom.yaml' --db '$2'" \
		>"$TMPD/b.out" 2>"$TMPD/b.err" &
	bg=$!
	rank0="" k=0
	while [ $k -lt 300 ] && kill -0 $bg 2>/dev/null && [ -z "$rank0" ]; do
		rank0=$(sqlite3 "$2" 'SELECT pid FROM runs' 2>/dev/null)
		sleep 0.1
		k=$((k + 1))
	done
	for p in $(pgrep -P $bg); do
		if { [ "$p" = "$rank0" ] && [ "$1" = 0 ]; } ||
		   { [ "$p" != "$rank0" ] && [ "$1" = 1 ]; }; then
			echo 1000 >"/proc/$p/oom_score_adj"
		fi
	done
	echo $((400 << 20)) >"$cg/$limit" || echo "# could not lower the limit"
	k=0
	while [ $k -lt 600 ] && kill -0 $bg 2>/dev/null; do
		sleep 0.1
		k=$((k + 1))
	done
	wait $bg
	rc=$?
	err=$(cat "$TMPD/b.err")
	out=$(cat "$TMPD/b.out")
}

oom_kills() {
	awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control" \
		"$cg/memory.events" 2>/dev/null | head -n 1
}
oom_once() { # victim db: oom_run until the kernel killed only the victim
	try=1
	while :; do
		rm -f "$2"
		k0=$(oom_kills)
		oom_run "$1" "$2"
		kills=$(( $(oom_kills) - ${k0:-0} ))
		[ "$kills" -le 1 ] || [ $try -ge 5 ] && break
		diag "try $try: the kernel killed $kills processes, the survivor too; again"
		try=$((try + 1))
	done
}

oom_once 1 "$TMPD/b.db"
ok "[ -n '$rank0' ]" "the run started under the 1 GiB limit (its check passed)"
is "$rc" 3 "rank 1 killed by the OOM killer: exit 3 (memory), not 4 (a lost rank)"
like "$err" "rank 1 \\(pid [0-9]+\\) was killed by the kernel's OOM killer on [^ ]+ \\(its memory cgroup counted 1 OOM kill during the run\\): it ran out of memory" \
	"the launcher names the OOM killer"
like "$err" "rank 1 was killed by the kernel's OOM killer on [^ ]+ \\(its memory cgroup counted 1 OOM kill during the run\\); the test needed more memory than the rank had: test 2 \\(reduce_scatter up to 67108864 bytes\\) needs ~297.6M of memory per rank \\(4 x its 64M buffer, as measured with Gloo, \\+10% and 16M\\); [^ ]+ is not blamed" \
	"rank 0's verdict: the victim, the host, what the test needed"
unlike "$err" "was lost during|killed by signal 9" "no rank is called lost"
is "$(sqlite3 "$TMPD/b.db" 'SELECT count(*) FROM suspects')" 0 \
	"no suspect is recorded"
like "$(sqlite3 "$TMPD/b.db" 'SELECT exit_status || " " || message FROM runs')" \
	"^3 rank 1 was killed by the kernel's OOM killer" "the run's record says it"
run "$SHAKEDOWN" report --bad-nodes --db "$TMPD/b.db"
is "$(printf '%s\n' "$out" | head -n 1)" "" "report --bad-nodes: no bad node"

# rank 0 the victim: no rank records the run's end; the launcher says it
oom_once 0 "$TMPD/c.db"
is "$rc" 3 "rank 0 killed by the OOM killer: exit 3"
like "$err" "rank 0 \\(pid [0-9]+\\) was killed by the kernel's OOM killer on [^ ]+ \\(its memory cgroup counted 1 OOM kill during the run\\): it ran out of memory, and [^ ]+ is not blamed" \
	"the launcher names the OOM killer"
is "$(sqlite3 "$TMPD/c.db" 'SELECT count(*) FROM suspects')" 0 \
	"no suspect is recorded"

# control: a rank that SIGKILLs itself in the same cgroup (no OOM kill
# counted) is still a lost rank
echo $((1 << 30)) >"$cg/$limit"
SHAKEDOWN_FAULT=rank=1,kind=kill,size=4K run -t 60 sh -c "$in_cg $SHAKEDOWN run --no-progress --local 2 --op all_reduce -b 4K -e 4K -n 3 -w 0 -T 5 --db none"
is "$rc" 4 "a rank killed by SIGKILL, not the OOM killer: exit 4"
like "$err" "rank 1 .*(was lost|killed by signal 9)" "named as lost"
unlike "$err" "OOM killer" "and not as the OOM killer's victim"

done_testing
