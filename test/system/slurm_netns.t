#!/bin/sh
# slurm_netns.t - a cluster whose nodes have their own hostnames and
# addresses: each slurmd runs in its own network and UTS namespace
# (test/system/slurm/netns.sh), so nothing can talk over 127.0.0.1 between nodes.
# The PMI2 bootstrap must work over Slurm's real addresses, and the Gloo
# transport and the control plane must each pick an address that other
# hosts can reach.
. "${top_srcdir:-.}/test/system/slurm/lib.sh"
PROBE=$top_builddir/test/system/pmi2_probe
if [ ! -x "$PROBE" ]; then
	echo "1..0 # SKIP built without PMI2 (apt-get install libpmi2-0-dev)"
	exit 0
fi
SD_SLURM_NETNS=1 sd_slurm_begin 3 5

out=$SD_TMP/probe
sd_srun --mpi=pmi2 -N 3 -n 4 "$PROBE" >"$out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^ok 12 ' "$out" && ! grep -q '^not ok' "$out"
ok $? "PMI2 bootstrap across namespaces, 4 tasks on 3 nodes (exit $rc)"
[ $rc = 0 ] || sd_show "$out"

out=$SD_TMP/hostname
sd_srun -N 3 --ntasks-per-node=1 hostname >"$out" 2>&1
[ "$(sort "$out" | tr '\n' ' ')" = "node1 node2 node3 " ]
ok $? "every node has its own hostname"
sd_show "$out"

if [ -x "${SHAKEDOWN:-}" ] && sd_have_gloo; then
	OPS=all_reduce,all_gather,broadcast,sendrecv,all_to_all
	out=$SD_TMP/run
	sd_srun --mpi=pmi2 -N 3 -n 4 "$SHAKEDOWN" run --backend gloo \
		--db none --format json --no-progress --op "$OPS" -b 1K \
		-e 256K -f 16 -n 2 -w 1 --timeout 30 >"$out" 2>&1
	rc=$?
	[ $rc = 0 ]
	ok $? "shakedown run with Gloo across namespaces (exit $rc)"
	sd_check_json "$out" "$OPS" 4
	ok $? "rows for every op, wrong 0"
	! grep -q '127\.0\.0\.1' "$out"
	ok $? "no rank reports a loopback address"
	[ $rc = 0 ] || sd_show "$out" | tail -n 30
else
	for i in 1 2 3; do
		skip "src/shakedown or the Gloo plugin is not built"
	done
fi
sd_slurm_end
