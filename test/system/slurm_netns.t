#!/bin/sh
# slurm_netns.t - a cluster whose nodes have their own hostnames and
# addresses: each slurmd runs in its own network and UTS namespace
# (test/system/slurm/netns.sh), so nothing can talk over 127.0.0.1 between nodes.
# The PMI2 bootstrap must work over Slurm's real addresses, and the Gloo
# transport and the control plane must each pick an address that other
# hosts can reach.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
PROBE=$top_builddir/test/system/pmi2_probe
[ -x "$PROBE" ] ||
	skip_all "built without PMI2 (apt-get install libpmi2-0-dev)"
SD_SLURM_NETNS=1 sd_slurm_begin 3 5

out=$SD_TMP/probe
sd_srun --mpi=pmi2 -N 3 -n 4 "$PROBE" >"$out" 2>&1
rc=$?
ok '[ $rc = 0 ] && grep -q "^ok 12 " "$out" && ! grep -q "^not ok" "$out"' \
	"PMI2 bootstrap across namespaces, 4 tasks on 3 nodes (exit $rc)"
[ $rc = 0 ] || diag_file "$out"

out=$SD_TMP/hostname
sd_srun -N 3 --ntasks-per-node=1 hostname >"$out" 2>&1
is "$(sort "$out" | tr '\n' ' ')" "node1 node2 node3 " \
	"every node has its own hostname"
diag_file "$out"

if [ -x "${SHAKEDOWN:-}" ] && sd_have_gloo; then
	OPS=all_reduce,all_gather,broadcast,sendrecv,all_to_all
	out=$SD_TMP/run
	sd_srun --mpi=pmi2 -N 3 -n 4 "$SHAKEDOWN" run --backend gloo \
		--db none --format json --no-progress --op "$OPS" -b 1K \
		-e 256K -f 16 -n 2 -w 1 --timeout 30 >"$out" 2>&1
	rc=$?
	is "$rc" 0 "shakedown run with Gloo across namespaces (exit $rc)"
	ok 'sd_check_json "$out" "$OPS" 4' "rows for every op, wrong 0"
	ok '! grep -q "127\.0\.0\.1" "$out"' "no rank reports a loopback address"
	[ $rc = 0 ] || diag_file "$out" | tail -n 30
else
	skip 3 "src/shakedown or the Gloo plugin is not built"
fi
done_testing
