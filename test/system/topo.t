#!/bin/sh
# topo.t - `shakedown topo` for real: local ranks with the Gloo backend,
# as a table and as JSON checked against this machine's own /sys/class/net;
# bad options and a missing backend; then, where network namespaces can be
# made, a namespace of the test's own with a veth whose MTU the test sets,
# seen both through ip netns exec (its own /sys) and through nsenter --net
# (the root namespace's /sys, as on the Slurm test cluster: topo must not
# report the root namespace's interfaces there).
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"

[ -x "$SHAKEDOWN" ] || skip_all "src/shakedown not built"
have_gloo || skip_all "the Gloo plugin is not built (it needs libgloo-dev)"
if command -v jq >/dev/null 2>&1; then
	json_ok() { jq -e . "$1" >/dev/null; }
	jget() { jq -r "$2" "$1"; }
elif command -v python3 >/dev/null 2>&1; then
	json_ok() { python3 -m json.tool "$1" >/dev/null; }
	jget() { # a jq path with only .key, [N] and [] steps, in python3
		python3 - "$1" "$2" <<-'EOF'
		import json, re, sys
		vals = [json.load(open(sys.argv[1]))]
		for key, idx, every in re.findall(r'\.(\w+)|\[(\d+)\]|(\[\])', sys.argv[2]):
		    nxt = []
		    for v in vals:
		        if key: nxt.append(v.get(key) if isinstance(v, dict) else None)
		        elif idx: nxt.append(v[int(idx)])
		        else: nxt.extend(v)
		    vals = nxt
		for v in vals:
		    print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)
		EOF
	}
else
	skip_all "needs jq or python3 to read the JSON"
fi

# the interfaces of this namespace but lo, as /sys/class/net has them
want_ifaces=$(ls /sys/class/net | grep -v -x lo | sort | tr '\n' ' ')

# ---------------------------------------------------------------- table
run -t 60 "$SHAKEDOWN" topo --local 3
is "$rc" 0 "topo --local 3 exits 0"
[ "$rc" = 0 ] || diag "$err"
host=$(uname -n)
like "$out" "^# shakedown topo: 1 host, 3 ranks, backend gloo \(launcher local\)" \
	"the header names hosts, ranks, backend and launcher"
like "$out" "^$host +0-2 +0:[0-9]" "one line for this host: ranks 0-2 and NUMA node 0"
like "$out" "HOST +INTERFACE +STATE +SPEED_MBPS +MTU +ADDRESS +IPV4" \
	"an interface table"
got=$(printf '%s\n' "$out" | awk -v h="$host" '
	/^HOST +INTERFACE/ { t = 1; next } t && $1 == h { print $2 }' |
	sort | tr '\n' ' ')
is "$got" "$want_ifaces" "every interface of /sys/class/net but lo"
bad=""
for i in $want_ifaces; do
	mtu=$(cat "/sys/class/net/$i/mtu")
	printf '%s\n' "$out" | grep -Eq "^$host +$i +[a-z]+ +[-0-9]+ +$mtu " ||
		bad="$bad $i"
done
is "$bad" "" "each interface's MTU is the one sysfs has"

# ----------------------------------------------------------------- JSON
run -t 60 "$SHAKEDOWN" topo --local 3 --format json
is "$rc" 0 "topo --local 3 --format json exits 0"
printf '%s\n' "$out" > "$TMPD/topo.json"
ok 'json_ok "$TMPD/topo.json"' "the output is one JSON document"
is "$(jget "$TMPD/topo.json" .nranks) $(jget "$TMPD/topo.json" .nhosts)" \
	"3 1" "nranks 3 on nhosts 1"
is "$(jget "$TMPD/topo.json" '.hosts[0].ranks[].rank' | tr '\n' ' ')" \
	"0 1 2 " "the host lists ranks 0, 1 and 2"
is "$(jget "$TMPD/topo.json" '.hosts[0].ranks[].local_rank' | tr '\n' ' ')" \
	"0 1 2 " "with local ranks 0, 1 and 2"
is "$(jget "$TMPD/topo.json" '.hosts[0].devices[0].ranks[]' | tr '\n' ' ')" \
	"0 1 2 " "the three ranks share the host's CPU device"
got=$(jget "$TMPD/topo.json" '.hosts[0].interfaces[].name' | sort |
	tr '\n' ' ')
is "$got" "$want_ifaces" "JSON: every interface of /sys/class/net but lo"
is "$(jget "$TMPD/topo.json" '.hosts[0].links[]' | wc -l | tr -d ' ')" 0 \
	"Gloo reports no device links"
like "$(jget "$TMPD/topo.json" '.hosts[0].links_note')" "NUMA layout" \
	"and says the NUMA layout is the topology"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
is "$(jget "$TMPD/topo.json" '.hosts[0].numa[].node' | wc -l | tr -d ' ')" \
	"$nodes" "one entry per NUMA node of /sys/devices/system/node ($nodes)"
is "$(jget "$TMPD/topo.json" '.hosts[0].cpus')" "$(getconf _NPROCESSORS_ONLN)" \
	"the online CPU count"

# ---------------------------------------------------------- what fails
run -t 30 "$SHAKEDOWN" topo --format yaml
is "$rc" 2 "--format yaml: exit 2"
like "$err" "--format 'yaml' must be table or json" "and says what it takes"
run -t 30 "$SHAKEDOWN" topo --local 0
is "$rc" 2 "--local 0: exit 2"
run -t 30 "$SHAKEDOWN" topo --frobnicate
like "$rc $err" "^2 .*unknown option '--frobnicate'" "an unknown option: exit 2"
run -t 30 "$SHAKEDOWN" topo --local 2 --backend nosuch
is "$rc" 3 "a backend that is not there: exit 3"
like "$err" "nosuch" "and it is named"
if [ ! -f "$top_builddir/plugins/nccl/.libs/backend_nccl.so" ]; then
	skip 3 "the NCCL plugin is not built"
elif [ -e /dev/nvidiactl ]; then
	skip 3 "a GPU driver is here: test/gpu/check.sh runs the NCCL backend"
else
	run -t 60 "$SHAKEDOWN" topo --local 2 --backend nccl
	is "$rc" 3 "the NCCL backend on a host without a GPU: exit 3"
	like "$err" "ranks 0-1 \($host\): no CUDA device" \
		"rank 0 says once that the ranks have no GPU"
	is "$(printf '%s\n' "$err" | grep -c "no CUDA device")" 1 \
		"in one line, not one a rank"
fi

# ------------------------------------------------- a namespace of its own
ns=sdtopo$$
veth=sdtv$$
why=""
if [ "$(id -u)" != 0 ]; then
	why="network namespaces need root"
elif ! command -v ip >/dev/null 2>&1 || ! command -v nsenter >/dev/null 2>&1
then
	why="needs ip and nsenter (apt-get install iproute2 util-linux)"
elif ! ip netns add "$ns" 2>/dev/null; then
	why="cannot create network namespaces here"
else
	at_exit "ip link del $veth 2>/dev/null; ip netns del $ns 2>/dev/null"
	if ! { ip -n "$ns" link set lo up &&
	       ip link add "$veth" type veth peer name "${veth}p" &&
	       ip link set "${veth}p" netns "$ns" &&
	       ip -n "$ns" link set "${veth}p" name topo0 &&
	       ip link set "$veth" mtu 9000 up &&
	       ip -n "$ns" link set topo0 mtu 9000 up &&
	       ip -n "$ns" addr add 10.79.0.2/24 dev topo0; }; then
		why="cannot make a veth into a network namespace"
	fi
fi
if [ -n "$why" ]; then
	skip 9 "$why"
	done_testing
fi
# the link comes up once both ends are up
i=0
while [ "$(ip -n "$ns" -o link show topo0 | grep -c 'state UP')" = 0 ] &&
      [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done

run -t 60 ip netns exec "$ns" "$SHAKEDOWN" topo --local 2
is "$rc" 0 "in the namespace (ip netns exec): exit 0"
like "$out" "^$host +topo0 +up +10000 +9000 +[0-9a-f:]+ +10\.79\.0\.2$" \
	"topo0: up, 10000 Mb/s (veth), the MTU 9000 the test set, its address"
got=$(printf '%s\n' "$out" | awk '/^HOST +INTERFACE/ { t = 1; next }
	t && NF == 7 { print $2 }' | tr '\n' ' ')
is "$got" "topo0 " "only the namespace's interface, not the root's"

# nsenter --net keeps the root namespace's /sys: ioctl must answer
ip -n "$ns" link set topo0 mtu 4321
run -t 60 nsenter --net="/run/netns/$ns" "$SHAKEDOWN" topo --local 2 \
	--format json
is "$rc" 0 "in the namespace (nsenter --net): exit 0"
printf '%s\n' "$out" > "$TMPD/ns.json"
ok 'json_ok "$TMPD/ns.json"' "valid JSON"
is "$(jget "$TMPD/ns.json" '.hosts[0].interfaces[].name' | tr '\n' ' ')" \
	"topo0 " "only topo0, though /sys shows the root namespace"
is "$(jget "$TMPD/ns.json" '.hosts[0].interfaces[0].mtu')" 4321 \
	"the MTU follows the change the test made (4321)"
is "$(jget "$TMPD/ns.json" '.hosts[0].interfaces[0].speed_mbps') $(jget "$TMPD/ns.json" '.hosts[0].interfaces[0].state')" \
	"10000 up" "speed and state from ioctl"
is "$(jget "$TMPD/ns.json" '.hosts[0].interfaces[0].ipv4[]') $(jget "$TMPD/ns.json" '.hosts[0].interfaces[0].source')" \
	"10.79.0.2 ioctl" "its address, and where the facts came from"
done_testing
