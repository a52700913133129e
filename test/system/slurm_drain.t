#!/bin/sh
# slurm_drain.t - --drain hands Slurm only single hosts of the job's
# allocation, on a private three-node cluster (node1..node3) whose
# slurmctld is the real judge: a node drained shows in sinfo.
#   - run --drain under srun -N 2: a floor nobody reaches fails both nodes,
#     which are drained (within SLURM_JOB_NODELIST)
#   - the same with SLURM_JOB_NODELIST planted as another job's (node3):
#     every host refused, nothing drained, the run's exit status kept
#   - report --bad-nodes --drain of that recorded run with one bad node's
#     host edited in the database (node[1-3], gpu[001-512] with the node
#     list edited to match, node1,node3, 'node1 node3', ALL, node3 of
#     another job, an edited node list that is not a hostlist): one line
#     naming the host and why, "nothing drained", exit 3, and sinfo shows
#     every node as it was (the valid bad node is not drained either: an
#     edited record does not half-act)
#   - the record put back: report --drain drains both nodes again
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/slurm/lib.sh"
sd_need_shakedown_gloo
command -v sqlite3 >/dev/null || skip_all "sqlite3 is needed to edit the database"
sd_slurm_begin 3 59

PLAN=$SD_TMP/floor.yaml
cat >"$PLAN" <<'EOF'
name: floor
defaults: {dtype: float32, min_bytes: 64K, max_bytes: 64K, iters: 3,
           warmup: 1, in_place: false, timeout: 30}
tests:
  - {op: all_reduce, scope: node, expect: {busbw: 100000}}
EOF
DB=$SD_TMP/d.db
q() { sqlite3 -batch "$DB" "$1"; }
# every node and its state, e.g. "node1:idle node2:drain node3:idle"
# (drained or draining: drain), once no node is still busy with a job
# or not yet answering (idle*)
states() {
	for _w in 1 2 3 4 5 6 7 8 9 10; do
		_st=$($SD_CLUSTER_CLIENT sinfo -h -N -o '%N:%T' | sort -u |
			sed 's/:drain[a-z]*$/:drain/' | tr '\n' ' ' |
			sed 's/ $//')
		case $_st in
		*:alloc*|*:mix*|*:compl*|*'*'*) sleep 1 ;;
		*) break ;;
		esac
	done
	printf '%s\n' "$_st"
}
resume() {
	$SD_CLUSTER_CLIENT scontrol update NodeName=node1,node2,node3 \
		State=RESUME >/dev/null 2>&1
}
IDLE="node1:idle node2:idle node3:idle"
# run NAME [ENV=VALUE...]: the floor on node1 and node2 with --drain
run_floor() {
	name=$1
	shift
	env SHAKEDOWN_SCONTROL=scontrol timeout 150 $SD_CLUSTER_CLIENT \
		srun -K -t 3 --mpi=pmi2 -N 2 -n 2 -w node1,node2 \
		env "$@" "$SHAKEDOWN" run --backend gloo --plan "$PLAN" \
		--db "$DB" --no-progress --drain >"$SD_TMP/$name" 2>&1
	rc=$?
}

is "$(states)" "$IDLE" "the cluster starts with every node idle"

# --- run --drain within the job's allocation ---------------------------------
run_floor real SD_UNUSED=1
is "$rc" 6 "a floor nobody reaches: exit 6"
[ "$rc" = 6 ] || diag_file "$SD_TMP/real" | tail -n 30
uuid=$(q "SELECT uuid FROM runs ORDER BY id DESC LIMIT 1")
run_id=$(q "SELECT id FROM runs WHERE uuid = '$uuid'")
is "$(q "SELECT group_concat(hosts, ' ') FROM (SELECT hosts FROM suspects
	WHERE run_id = $run_id AND bad_node = 1 ORDER BY hosts)")" \
	"node1 node2" "both nodes are bad nodes"
is "$(q "SELECT nodelist FROM jobs WHERE run_id = $run_id")" "node[1-2]" \
	"the run's node list is recorded"
like "$(cat "$SD_TMP/real")" "drained node1 \\(shakedown $uuid: " \
	"--drain says it drained node1"
like "$(cat "$SD_TMP/real")" "drained node2 \\(shakedown $uuid: " "and node2"
is "$(states)" "node1:drain node2:drain node3:idle" \
	"sinfo shows both nodes drained, node3 as it was"
resume
is "$(states)" "$IDLE" "resumed"

# --- run --drain with another job's allocation --------------------------------
run_floor other SLURM_JOB_NODELIST=node3
is "$rc" 6 "SLURM_JOB_NODELIST of another job: the run's exit status stays 6"
out=$(cat "$SD_TMP/other")
like "$out" "shakedown: --drain: refusing host 'node1': it is not a host of the job's allocation \\(SLURM_JOB_NODELIST 'node3'\\)" \
	"node1 is refused: not in the allocation"
like "$out" "refusing host 'node2': it is not a host" "and node2"
like "$out" "shakedown: --drain: nothing drained: 2 of 2 host names refused \\(above\\)" \
	"one line says nothing was drained"
unlike "$out" "drained node|scontrol update|drain them later" \
	"no scontrol ran, no advice to drain later"
is "$(states)" "$IDLE" "sinfo: every node as it was"
run_floor malformed 'SLURM_JOB_NODELIST=node[1-'
like "$(cat "$SD_TMP/malformed")" "refusing every host: the job's allocation \\(SLURM_JOB_NODELIST 'node\\[1-'\\) is not a hostlist: .*no ']' closes the '\\['" \
	"an allocation that is not a hostlist: every host refused, said why"
is "$(states)" "$IDLE" "sinfo: every node as it was"

# --- report --drain of an edited record ------------------------------------------
# plant NAME HOST [NODELIST]: node2's suspect row names HOST (and the job's
# node list is NODELIST), then report --bad-nodes --drain
plant() {
	name=$1 host=$2 list=${3:-node[1-2]}
	q "UPDATE suspects SET hosts = '$host' WHERE run_id = $run_id AND
		bad_node = 1 AND hosts != 'node1';
	   UPDATE jobs SET nodelist = '$list' WHERE run_id = $run_id"
	$SD_CLUSTER_CLIENT "$SHAKEDOWN" report --bad-nodes --drain --db "$DB" \
		"$uuid" >"$SD_TMP/$name.out" 2>"$SD_TMP/$name.err"
	rc=$?
	err=$(cat "$SD_TMP/$name.err")
}
# HOST as a regular expression
esc() { printf '%s' "$1" | sed 's/[]*.[]/\\&/g'; }
# refused NAME HOST WHY [NODELIST]: the plant is refused with WHY
refused() {
	plant "$1" "$2" "${4:-}"
	is "$rc" 3 "$1: exit 3"
	like "$err" "^shakedown: --drain: refusing host '$(esc "$2")': $3" \
		"$1: the host is named, and why"
	like "$err" "shakedown: --drain: nothing drained: 1 of 2 host names refused \\(above\\)" \
		"$1: nothing drained"
	like "$err" "shakedown report: nothing drained: the record names a host that is not one host of the run's node list \\(above\\); the report is complete" \
		"$1: report's own line"
	unlike "$err" "drained node|could not drain" "$1: no scontrol ran"
	is "$(states)" "$IDLE" "$1: sinfo shows every node as it was"
	[ "$(states)" = "$IDLE" ] || resume
}
refused range 'node[1-3]' "it holds '\\[': Slurm reads it as a hostlist of ranges, not one host"
refused wide 'gpu[001-512]' "it holds '\\['" 'gpu[001-512],node1'
refused comma 'node1,node3' "it holds ',': Slurm reads it as a list of hosts, not one host"
refused space 'node1 node3' "it holds whitespace: Slurm reads it as a list of hosts, not one host"
refused all ALL "Slurm reads NodeName=ALL as every node of the cluster"
refused other node3 "it is not a host of the job's allocation \\(the run's recorded node list 'node\\[1-2\\]'\\)"

plant badlist node2 'node[1-'
is "$rc" 3 "a recorded node list that is not a hostlist: exit 3"
like "$err" "refusing every host: the job's allocation \\(the run's recorded node list 'node\\[1-'\\) is not a hostlist" \
	"said why"
is "$(states)" "$IDLE" "sinfo: every node as it was"

# the record put back: the same command drains both nodes
plant back node2
is "$rc" 0 "the record put back: report --drain exits 0"
like "$err" "drained node1 \\(shakedown $uuid: " "and drains node1"
like "$err" "drained node2 \\(shakedown $uuid: " "and node2"
is "$(states)" "node1:drain node2:drain node3:idle" \
	"sinfo shows both drained, node3 as it was"
resume
done_testing
