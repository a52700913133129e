#!/bin/sh
# cluster.sh - a private Slurm cluster on this machine, for the test suite.
#
# Brings up munge (its own key and socket), slurmctld and several slurmd
# acting as distinct nodes (node1..nodeN, Slurm's MULTIPLE_SLURMD) in a
# temporary folder, on ports found free at start, so that two copies of the
# suite never clash.  Needs root (slurmd starts tasks as any user) and the
# Debian packages slurmctld slurmd slurm-client munge.
#
# From a test (sourced):
#   . "$top_srcdir/test/system/slurm/cluster.sh"
#   sd_cluster_start 3 || skip_all "$SD_CLUSTER_SKIP"
#   (exports SLURM_CONF and SD_CLUSTER_DIR; stops everything at exit:
#   through at_exit of test/system/lib.sh when that is loaded, else with
#   an EXIT trap of its own; sd_cluster_stop may also be called directly)
# By hand:
#   test/system/slurm/cluster.sh start [NODES]   prints the folder; leaves it up
#   test/system/slurm/cluster.sh env DIR         prints "export SLURM_CONF=..."
#   test/system/slurm/cluster.sh stop DIR
# Variables: SD_CLUSTER_CPUS (CPUs per node, default 8),
# SD_CLUSTER_KEEP=1 (keep the folder and logs after stop),
# SD_CLUSTER_NETNS=1 (set by netns.sh: nodes in their own namespaces).

SD_CLUSTER_SKIP=
# Settings a caller may give; empty otherwise (the tests run with set -u).
SD_CLUSTER_NETNS=${SD_CLUSTER_NETNS:-}
SD_CLUSTER_NO_TRAP=${SD_CLUSTER_NO_TRAP:-}
SD_CLUSTER_KEEP=${SD_CLUSTER_KEEP:-}
SD_CLUSTER_DIR=${SD_CLUSTER_DIR:-}
sd_cluster_own_trap=

# Print a TAP comment on stderr (stdout carries the TAP stream).
sd_cluster_note() {
	echo "# cluster: $*" >&2
}

# Why the cluster cannot run here, or nothing when it can.
sd_cluster_why_not() {
	if [ "$(id -u)" != 0 ]; then
		echo "slurm daemons need root"
		return
	fi
	for prog in slurmctld slurmd srun sbatch sinfo scontrol munged; do
		if ! command -v "$prog" >/dev/null 2>&1 &&
		   [ ! -x "/usr/sbin/$prog" ]; then
			echo "$prog not installed (apt-get install slurmctld" \
			     "slurmd slurm-client munge)"
			return
		fi
	done
}

# A TCP port nobody listens on, from a random spread of the dynamic range.
sd_cluster_free_port() {
	while :; do
		p=$(( ($(od -An -N2 -tu2 /dev/urandom) % 30000) + 20000 ))
		if ! ss -Htan "sport = :$p" 2>/dev/null | grep -q .; then
			case " $sd_cluster_ports " in
			*" $p "*) continue ;;
			esac
			sd_cluster_ports="$sd_cluster_ports $p"
			echo "$p"
			return
		fi
	done
}

# Write slurm.conf for NODES nodes into $SD_CLUSTER_DIR.
sd_cluster_write_conf() {
	nodes=$1
	d=$SD_CLUSTER_DIR
	cpus=${SD_CLUSTER_CPUS:-8}
	sd_cluster_ports=
	ctl_port=$(sd_cluster_free_port)
	ctl_host=$(hostname -s 2>/dev/null || hostname)
	ctl_addr=127.0.0.1
	if [ -n "$SD_CLUSTER_NETNS" ]; then
		ctl_host=ctl
		ctl_addr=$SD_CLUSTER_CTL_ADDR
	fi
	cat >"$d/slurm.conf" <<EOF
# Written by test/system/slurm/cluster.sh; the cluster lives in $d.
ClusterName=sdtest
SlurmctldHost=$ctl_host($ctl_addr)
SlurmctldPort=$ctl_port
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=pmi2
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerParameters=sched_interval=1
MinJobAge=10
KillWait=3
InactiveLimit=0
SlurmdTimeout=30
SlurmctldTimeout=30
MessageTimeout=10
EOF
	i=1
	while [ "$i" -le "$nodes" ]; do
		port=$(sd_cluster_free_port)
		if [ -n "$SD_CLUSTER_NETNS" ]; then
			echo "NodeName=node$i NodeHostname=node$i" \
			     "NodeAddr=$(sd_cluster_node_addr "$i")" \
			     "Port=$port CPUs=$cpus State=UNKNOWN"
		else
			echo "NodeName=node$i NodeHostname=localhost" \
			     "NodeAddr=127.0.0.1 Port=$port CPUs=$cpus" \
			     "State=UNKNOWN"
		fi
		i=$((i + 1))
	done >>"$d/slurm.conf"
	echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=30" \
	     "State=UP OverSubscribe=YES" >>"$d/slurm.conf"
}

# Start munged with a key and socket of our own.
sd_cluster_start_munge() {
	d=$SD_CLUSTER_DIR
	mkdir -p "$d/munge" && chmod 700 "$d/munge" || return 1
	dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 \
		2>/dev/null || return 1
	chmod 600 "$d/munge/munge.key"
	# munged runs as root here; --force accepts the private folder.
	munged --force --socket="$d/munge/munge.socket" \
		--key-file="$d/munge/munge.key" \
		--pid-file="$d/munge/munged.pid" \
		--log-file="$d/munge/munged.log" \
		--seed-file="$d/munge/munged.seed" || return 1
	# munged daemonises: its PID is in the pid file once it is ready.
	n=0
	while [ ! -S "$d/munge/munge.socket" ] && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ -S "$d/munge/munge.socket" ] || return 1
	cat "$d/munge/munged.pid" >"$d/run/munged.pid"
}

# Run a client command (srun, sbatch, sinfo) where the controller is:
# tests put $SD_CLUSTER_CLIENT in front of their srun and sbatch.
SD_CLUSTER_CLIENT=${SD_CLUSTER_CLIENT:-}
sd_cluster_client() {
	$SD_CLUSTER_CLIENT "$@"
}

# Wait until sinfo shows every node idle (up to about 30 s).
sd_cluster_wait_idle() {
	nodes=$1
	n=0
	while [ $n -lt 150 ]; do
		idle=$(sd_cluster_client sinfo -h -N -o '%N %t' 2>/dev/null |
		       grep -c ' idle$')
		[ "${idle:-0}" -ge "$nodes" ] && return 0
		sleep 0.2
		n=$((n + 1))
	done
	return 1
}

sd_cluster_dump_logs() {
	for f in "$SD_CLUSTER_DIR"/log/*.log "$SD_CLUSTER_DIR"/munge/*.log \
		 "$SD_CLUSTER_DIR"/log/*.out; do
		[ -f "$f" ] || continue
		echo "# ---- $f" >&2
		tail -n 20 "$f" | sed 's/^/# /' >&2
	done
}

# sd_cluster_start [NODES]: bring the cluster up; 1 with SD_CLUSTER_SKIP
# set when it cannot run here, 2 when it failed to start.
sd_cluster_start() {
	nodes=${1:-3}
	SD_CLUSTER_SKIP=$(sd_cluster_why_not)
	[ -z "$SD_CLUSTER_SKIP" ] || return 1
	PATH=$PATH:/usr/sbin:/sbin
	# Inherited Slurm variables (a suite run inside a job) would confuse
	# srun and sbatch here.
	for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
	SD_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/sd-slurm.XXXXXX") ||
		return 2
	export SD_CLUSTER_DIR
	export SLURM_CONF="$SD_CLUSTER_DIR/slurm.conf"
	if [ -z "$SD_CLUSTER_NO_TRAP" ]; then
		if command -v at_exit >/dev/null 2>&1; then
			# test/system/lib.sh: its one EXIT trap runs the hooks
			at_exit sd_cluster_stop
		else
			sd_cluster_own_trap=1
			trap 'sd_cluster_stop' EXIT
			trap 'exit 130' INT TERM
		fi
	fi
	mkdir -p "$SD_CLUSTER_DIR/state" "$SD_CLUSTER_DIR/log" \
		"$SD_CLUSTER_DIR/run" "$SD_CLUSTER_DIR/spool"
	i=1
	while [ "$i" -le "$nodes" ]; do
		mkdir -p "$SD_CLUSTER_DIR/spool/node$i"
		i=$((i + 1))
	done
	echo "$nodes" >"$SD_CLUSTER_DIR/nodes"
	if [ -n "$SD_CLUSTER_NETNS" ]; then
		{
			echo "127.0.0.1 localhost"
			echo "$SD_CLUSTER_CTL_ADDR ctl"
			i=1
			while [ "$i" -le "$nodes" ]; do
				echo "$(sd_cluster_node_addr "$i") node$i"
				i=$((i + 1))
			done
		} >"$SD_CLUSTER_DIR/hosts"
	fi
	if ! sd_cluster_start_munge; then
		sd_cluster_note "munged did not start"
		sd_cluster_dump_logs
		return 2
	fi
	sd_cluster_write_conf "$nodes"
	if [ -n "$SD_CLUSTER_NETNS" ]; then
		setsid nsenter --net="/run/netns/$SD_CLUSTER_NETNS_PREFIX-br" \
			unshare --uts sh -c 'hostname ctl && exec "$@"' ctl \
			slurmctld -D -i -f "$SLURM_CONF" \
			>"$SD_CLUSTER_DIR/log/slurmctld.out" 2>&1 &
	else
		setsid slurmctld -D -i -f "$SLURM_CONF" \
			>"$SD_CLUSTER_DIR/log/slurmctld.out" 2>&1 &
	fi
	echo $! >"$SD_CLUSTER_DIR/run/slurmctld.launcher.pid"
	i=1
	while [ "$i" -le "$nodes" ]; do
		# setsid, nsenter, unshare and sh all exec: $! is slurmd.
		if [ -n "$SD_CLUSTER_NETNS" ]; then
			setsid nsenter \
				--net="/run/netns/$SD_CLUSTER_NETNS_PREFIX-n$i" \
				unshare --uts --mount sh -c 'h=$0 f=$1; shift
				mount --bind "$f" /etc/hosts &&
				hostname "$h" && exec "$@"' "node$i" \
				"$SD_CLUSTER_DIR/hosts" \
				slurmd -D -N "node$i" -f "$SLURM_CONF" \
				>"$SD_CLUSTER_DIR/log/slurmd.node$i.out" 2>&1 &
		else
			setsid slurmd -D -N "node$i" -f "$SLURM_CONF" \
				>"$SD_CLUSTER_DIR/log/slurmd.node$i.out" 2>&1 &
		fi
		echo $! >"$SD_CLUSTER_DIR/run/slurmd.node$i.launcher.pid"
		i=$((i + 1))
	done
	# Should the test be killed outright (no EXIT trap), a watchdog stops
	# the cluster once the test's shell is gone.
	if [ -z "$SD_CLUSTER_NO_TRAP" ]; then
		sd_cluster_owner=$$
		(
			trap - EXIT INT TERM
			while kill -0 "$sd_cluster_owner" 2>/dev/null; do
				sleep 1
			done
			sd_cluster_stop
		) </dev/null >/dev/null 2>&1 &
	fi
	if ! sd_cluster_wait_idle "$nodes"; then
		sd_cluster_note "nodes did not become idle:" \
			"$(sd_cluster_client sinfo -N 2>&1 | tr '\n' ' ')"
		sd_cluster_dump_logs
		return 2
	fi
	return 0
}

# Is PID alive?
sd_cluster_alive() {
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null
}

# Wait up to $2 tenths of a second for the PIDs in $1 to exit.
sd_cluster_wait_pids() {
	n=0
	while [ $n -lt "$2" ]; do
		left=
		for p in $1; do
			sd_cluster_alive "$p" && left="$left $p"
		done
		[ -z "$left" ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	return 1
}

# sd_cluster_stop: cancel jobs, shut Slurm down, stop munged, remove the
# folder.  Every daemon is stopped by the PID recorded when it started.
sd_cluster_stop() {
	[ -n "$SD_CLUSTER_DIR" ] && [ -d "$SD_CLUSTER_DIR/run" ] || return 0
	d=$SD_CLUSTER_DIR
	if [ -n "$sd_cluster_own_trap" ]; then
		trap - EXIT
	fi
	export SLURM_CONF="$d/slurm.conf"
	pids=
	for f in "$d"/run/slurmctld.pid "$d"/run/slurmd.*.pid \
		 "$d"/run/*.launcher.pid; do
		[ -f "$f" ] && pids="$pids $(cat "$f")"
	done
	if [ -f "$d/run/slurmctld.pid" ]; then
		timeout 10 $SD_CLUSTER_CLIENT scancel --quiet --full \
			--user=root >/dev/null 2>&1
		n=0
		while [ $n -lt 50 ] && [ -n "$(timeout 5 \
			$SD_CLUSTER_CLIENT squeue -h -o %i 2>/dev/null)" ]; do
			sleep 0.2
			n=$((n + 1))
		done
		timeout 10 $SD_CLUSTER_CLIENT scontrol shutdown \
			>/dev/null 2>&1
	fi
	if ! sd_cluster_wait_pids "$pids" 100; then
		for p in $pids; do
			sd_cluster_alive "$p" && kill -TERM "$p" 2>/dev/null
		done
		sd_cluster_wait_pids "$pids" 50 ||
		for p in $pids; do
			sd_cluster_alive "$p" && kill -KILL "$p" 2>/dev/null
		done
	fi
	if [ -f "$d/run/munged.pid" ]; then
		mp=$(cat "$d/run/munged.pid")
		sd_cluster_alive "$mp" && kill -TERM "$mp" 2>/dev/null
		sd_cluster_wait_pids "$mp" 50
	fi
	if [ -n "$SD_CLUSTER_KEEP" ]; then
		sd_cluster_note "kept $d"
	else
		rm -rf "$d"
	fi
	SD_CLUSTER_DIR=
}

case ${0##*/} in
cluster.sh)
	case $1 in
	start)
		SD_CLUSTER_NO_TRAP=1
		if sd_cluster_start "${2:-3}"; then
			echo "$SD_CLUSTER_DIR"
			exit 0
		fi
		rc=$?
		[ -n "$SD_CLUSTER_SKIP" ] && echo "cannot start: $SD_CLUSTER_SKIP" >&2
		[ -n "$SD_CLUSTER_DIR" ] && sd_cluster_stop
		exit "$rc"
		;;
	env)
		echo "export SLURM_CONF=$2/slurm.conf"
		;;
	stop)
		SD_CLUSTER_DIR=$2
		sd_cluster_stop
		;;
	*)
		echo "usage: $0 start [NODES] | env DIR | stop DIR" >&2
		exit 2
		;;
	esac
	;;
esac
