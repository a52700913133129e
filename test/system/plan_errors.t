#!/bin/sh
# plan_errors.t - every message a broken plan (or a broken `shakedown plan`
# command line) can get, from a table: one row per message and variant,
# each run with no cluster and no backend.  Each must exit 2, print nothing
# on standard output and one line on standard error, naming FILE:LINE (the
# line of the offending key or value, or of its test for what is judged
# when the test expands) and the fix.  The table names, for each row, the
# source text of the message's format string; the last tests check that
# the rows cover every message site of lib/plan.c and src/cmd_plan.c, so a
# new message without a row fails here.  Then good plans that use expect
# and retries check, and expand to canonical text that holds them.
. "${top_srcdir:-$(dirname "$0")/../..}/test/system/lib.sh"
export SHAKEDOWN_PLUGIN_DIR=/nonexistent # no backend is needed
export LC_ALL=C                          # strerror's words
cd "$TMPD" || bail_out "cannot cd to $TMPD"

# Rows: SITE|CMD|TEXT|WANT
#   SITE  a piece of the message's format string in the source, as written
#         there (quotes included), found once in lib/plan.c and
#         src/cmd_plan.c
#   CMD   the arguments of shakedown; '-' is `plan check --ranks 4 FILE`;
#         FILE stands for the row's plan file pN.yaml, MANY for 300 words
#   TEXT  the plan (printf %b); '-' writes none, @empty an empty file,
#         @dir a folder; @LONG becomes 520 x's, @LONGSW 300 switches
#   WANT  an extended regex for the whole message after "shakedown plan: "
#         (or "shakedown: " for run); @F at its start is the file's name
# The line that is wrong is not line 1 wherever it can be elsewhere.
# (In a plan the test line is line 3 or 4: "name: t" and "tests:" first.)
good='name: t\ntests:\n  - op: all_reduce\n'
cat >rows <<'ROWS'
'%s' must be a name or a list of names|-|name: t\ntests:\n  - op: all_reduce\n    dtype: {a: b}\n|@F:4: 'dtype' must be a name or a list of names$
'%s' must list plain names|-|name: t\ntests:\n  - op: all_reduce\n    redop: [sum, [max]]\n|@F:4: 'redop' must list plain names$
"'env' must be a mapping of NCCL_* "|-|name: t\ntests:\n  - op: all_reduce\n    env: NCCL_MIN_CTAS=4\n|@F:4: 'env' must be a mapping of NCCL_\* names to values, e\.g\. env: \{NCCL_MIN_CTAS: 4\}$
"env: '%s' is not an NCCL_* "|-|name: t\ntests:\n  - op: all_reduce\n    env:\n      NCCL_MIN_CTAS: 4\n      CUDA_VISIBLE_DEVICES: 0\n|@F:6: env: 'CUDA_VISIBLE_DEVICES' is not an NCCL_\* name with a plain value \(no spaces, ';' or '='\)$
"%s: %s's value '%s' must be plain "|-|name: t\ntests:\n  - op: all_reduce\n    env:\n      NCCL_NET: "IB Socket"\n|@F:5: env: NCCL_NET's value 'IB Socket' must be plain \(no spaces, ';' or '='\)$
"%s: too long (at most %zu "|-|name: t\ntests:\n  - op: all_reduce\n    env: {NCCL_BUFFSIZE: @LONG}\n|@F:4: env: too long \(at most 511 characters\)$
"'process_env' must be a mapping of "|-|name: t\ntests:\n  - op: all_reduce\n    process_env: NCCL_P2P_DISABLE=1\n|@F:4: 'process_env' must be a mapping of variable names to values, e\.g\. process_env: \{NCCL_P2P_DISABLE: 1\}$
"process_env: '%s' is not a "|-|name: t\ntests:\n  - op: all_reduce\n    process_env:\n      NCCL_P2P_DISABLE: 1\n      NCCL-X: 0\n|@F:6: process_env: 'NCCL-X' is not a variable name \(letters, digits and '_', not first a digit\)$
"%s: %s's value '%s' must be plain "|-|name: t\ntests:\n  - op: all_reduce\n    process_env:\n      NCCL_IB_HCA: "mlx5_0 mlx5_1"\n|@F:5: process_env: NCCL_IB_HCA's value 'mlx5_0 mlx5_1' must be plain \(no spaces, ';' or '='\)$
"%s: too long (at most %zu "|-|name: t\ntests:\n  - op: all_reduce\n    process_env: {NCCL_BUFFSIZE: @LONG}\n|@F:4: process_env: too long \(at most 511 characters\)$
"transport '%s' is not one plans "|-|name: t\ntests:\n  - op: all_reduce\n    transport: nvlnk\n|@F:4: transport 'nvlnk' is not one plans know; did you mean 'nvlink'\?; use nvlink, pcie, p2p, shm, tcp or ib$
"iface '%s' must be a network "|-|name: t\ntests:\n  - op: all_reduce\n    iface: "eth0 eth1"\n|@F:4: iface 'eth0 eth1' must be a network interface name such as eth1 \(at most 31 characters, no spaces\)$
"env: %s", why|-|name: t\ntests:\n  - op: all_reduce\n  - op: all_gather\n    env: {NCCL_P2P_DISABLE: 1}\n|@F:5: env: NCCL_P2P_DISABLE is read once per process by NCCL, so a test cannot change it; set it in the job's environment instead, e\.g\. NCCL_P2P_DISABLE=1 srun \.\.\. shakedown run$
"env: %s", why|-|name: t\ntests:\n  - op: all_reduce\n    env:\n      NCCL_MIN_CTAS: 4\n      NCCL_ALGO: Ring\n|@F:6: env: NCCL_ALGO is read by NCCL only from the process environment, which shakedown does not change while NCCL's threads run; set it in the job's environment instead, e\.g\. NCCL_ALGO=Ring srun \.\.\. shakedown run, one run per value$
"env: %s", why|-|name: t\ndefaults:\n  env: {NCCL_DEBUG: INFO}\ntests:\n  - op: all_reduce\n|@F:3: env: NCCL_DEBUG is read once per process by NCCL, so a test cannot change it; set it in the job's environment instead, e\.g\. NCCL_DEBUG=INFO srun \.\.\. shakedown run$
"env: %s", why|-|name: t\ntests:\n  - op: all_reduce\n    env: {NCCL_SOCKET_IFNAME: eth0}\n|@F:4: env: NCCL_SOCKET_IFNAME is read once per process by NCCL, so a test cannot change it; set it in the job's environment instead, e\.g\. NCCL_SOCKET_IFNAME=eth0 srun \.\.\. shakedown run, or --iface NAME$
"env: %s", why|-|name: t\ntests:\n  - op: all_reduce\n    env: {NCCL_COMM_BLOCKING: 1}\n|@F:4: env: NCCL_COMM_BLOCKING is shakedown's to set: its communicators are blocking, as nccl-tests makes them, and --timeout is kept by polling the stream; drop it$
"env: %s", why|-|name: t\ntests:\n  - op: all_reduce\n    env: {NCCL_NTHREADS: 256}\n|@F:4: env: NCCL_NTHREADS is not one NCCL takes per communicator \(a test can set only NCCL_CGA_CLUSTER_SIZE, NCCL_MIN_CTAS, .*, which become ncclConfig_t fields\); set it in the job's environment instead, e\.g\. NCCL_NTHREADS=256 srun \.\.\. shakedown run$
"env: %s", why|-|name: t\ntests:\n  - op: all_reduce\n    env:\n      NCCL_MIN_CTAS: 0\n|@F:5: env: NCCL_MIN_CTAS '0' must be a whole number from 1 to 64 \(it becomes ncclConfig_t's minCTAs\)$
"env: %s", why|run --backend nccl --plan FILE|name: t\ntests:\n  - op: all_reduce\n    env: {NCCL_SHM_DISABLE: 1}\n|@F:4: env: NCCL_SHM_DISABLE is read once per process by NCCL, so a test cannot change it; set it in the job's environment instead, e\.g\. NCCL_SHM_DISABLE=1 srun \.\.\. shakedown run$
"%s: env: %s"|-|name: t\ndefaults:\n  env: {NCCL_MAX_CTAS: 2}\ntests:\n  - op: all_reduce\n  - op: broadcast\n    env: {NCCL_MIN_CTAS: 8}\n|@F:6: env: NCCL_MIN_CTAS 8 is more than NCCL_MAX_CTAS 2, which NCCL refuses; make the minimum at most the maximum$
"'expect' must be a mapping, e.g. expect: "|-|name: t\ntests:\n  - op: all_reduce\n    expect: 20\n|@F:4: 'expect' must be a mapping, e\.g\. expect: \{busbw: 20, at: 64M, peers: 0\.8\}$
"unknown expectation '%s'; "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      at: 1M\n      peer: 0.8\n|@F:6: unknown expectation 'peer'; did you mean 'peers'\?$
"unknown expectation '%s'; expect "|-|name: t\ntests:\n  - op: all_reduce\n    expect: {floor: 20}\n|@F:4: unknown expectation 'floor'; expect knows busbw, time, at, peers, mad and baseline$
"expect: '%s' must be a single value",|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      busbw: [20, 30]\n|@F:5: expect: 'busbw' must be a single value$
"expect: busbw '%s' must be "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      busbw: fast\n|@F:5: expect: busbw 'fast' must be a bus bandwidth in GB/s above 0, e\.g\. busbw: 20$
"expect: busbw '%s' must be "|-|name: t\ntests:\n  - op: all_reduce\n    expect: {busbw: 0}\n|@F:4: expect: busbw '0' must be a bus bandwidth in GB/s above 0
"expect: time '%s' must be "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      time: 5min\n|@F:5: expect: time '5min' must be a time per iteration above 0 with us, ms or s, e\.g\. time: 250us$
"expect: at '%s' is not a "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      busbw: 1\n      at: big\n|@F:6: expect: at 'big' is not a size; use a number with an optional K, M or G suffix$
"expect: peers '%s' must be "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      peers: 1.5\n|@F:5: expect: peers '1\.5' must be a fraction of the median above 0 and at most 1, e\.g\. peers: 0\.8$
"expect: mad '%s' must be a "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      mad: -1\n|@F:5: expect: mad '-1' must be a number of median absolute deviations above 0, e\.g\. mad: 5$
"expect: baseline '%s' must "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      baseline: 90%\n|@F:5: expect: baseline '90%' must be a fraction of the baseline above 0, e\.g\. baseline: 0\.9$
"unknown key '%s'; did you mean "|-|name: t\ntests:\n  - op: all_reduce\n    expct: {busbw: 20}\n|@F:4: unknown key 'expct'; did you mean 'expect'\?$
"unknown key '%s'; did you mean "|-|name: t\ndefaults:\n  iters: 5\n  warmpu: 1\ntests:\n  - op: all_reduce\n|@F:4: unknown key 'warmpu'; did you mean 'warmup'\?$
"unknown key '%s'; plans know op, dtype, "|-|name: t\ntests:\n  - op: all_reduce\n    sizes: [1K, 1M]\n|@F:4: unknown key 'sizes'; plans know op, dtype, redop, root, algo, min_bytes, max_bytes, step_factor, step_bytes, iters, warmup, check, per_iter, in_place, combine, timeout, scope, env, expect, retries, transport, iface, process_env, seed$
"'%s' must be a single value"|-|name: t\ntests:\n  - op: all_reduce\n    iters: [10, 20]\n|@F:4: 'iters' must be a single value$
"%s '%s' must be true or false"|-|name: t\ntests:\n  - op: all_reduce\n    in_place: sometimes\n|@F:4: in_place 'sometimes' must be true or false$
"combine '%s' must be avg, min, max "|-|name: t\ntests:\n  - op: all_reduce\n    combine: mean\n|@F:4: combine 'mean' must be avg, min, max or rank0$
"timeout '%s' must be a positive "|-|name: t\ntests:\n  - op: all_reduce\n    timeout: 30s\n|@F:4: timeout '30s' must be a positive number of seconds$
"%s '%s' must be a size above 0: a "|-|name: t\ntests:\n  - op: all_reduce\n    max_bytes: 1Q\n|@F:4: max_bytes '1Q' must be a size above 0: a number with an optional K, M or G suffix$
"%s '%s' must be a size above 0: a "|-|name: t\ntests:\n  - op: all_reduce\n    min_bytes: 0\n|@F:4: min_bytes '0' must be a size above 0
"step_factor '%s' must be a number "|-|name: t\ntests:\n  - op: all_reduce\n    step_factor: 0.5\n|@F:4: step_factor '0\.5' must be a number above 1 \(for even steps use step_bytes\)$
"retries '%s' must be a whole number "|-|name: t\ntests:\n  - op: all_reduce\n    retries: 11\n|@F:4: retries '11' must be a whole number from 0 to 10$
"%s '%s' must be a whole number "|-|name: t\ntests:\n  - op: all_reduce\n    iters: ten\n|@F:4: iters 'ten' must be a whole number from 1 to 1000000$
"%s '%s' must be a whole number "|-|name: t\ntests:\n  - op: all_reduce\n    iters: 0\n|@F:4: iters '0' must be a whole number from 1 to 1000000$
"step_factor '%s' must be a number "|-|name: t\ntests:\n  - op: all_reduce\n    step_factor: nan\n|@F:4: step_factor 'nan' must be a number above 1 \(for even steps use step_bytes\)$
"step_factor '%s' must be a number "|-|name: t\ntests:\n  - op: all_reduce\n    step_factor: 0x10\n|@F:4: step_factor '0x10' must be a number above 1 \(for even steps use step_bytes\)$
"%s '%s' must be a whole number "|-|name: t\ntests:\n  - op: all_reduce\n    warmup: -1\n|@F:4: warmup '-1' must be a whole number from 0 to 1000000$
"%s '%s' must be a whole number "|-|name: t\ntests:\n  - op: all_reduce\n    check: 1001\n|@F:4: check '1001' must be a whole number from 0 to 1000$
"expected a mapping of key: value"|-|name: t\ntests:\n  - op: all_reduce\n  - broadcast\n|@F:4: expected a mapping of key: value$
"expected a mapping of key: value"|-|name: t\ndefaults: 3\ntests:\n  - op: all_reduce\n|@F:2: expected a mapping of key: value$
"keys must be plain names"|-|name: t\ntests:\n  - op: all_reduce\n    [a, b]: 1\n|@F:4: keys must be plain names$
"%s:%lu: %s; fix the YAML syntax"|-|name: t\ntests:\n  - op: all_reduce\n    dtype: a: b\n|@F:4: mapping values are not allowed in this context; fix the YAML syntax$
"%s:%lu: %s; fix the YAML syntax"|-|name: t\ntests:\n  - op: all_reduce\n\titers: 5\n|@F:4: found a tab character that violates indentation; fix the YAML syntax$
"a plan is a mapping with 'tests:' (and "|-|# a list, not a mapping\n- op: all_reduce\n|@F:2: a plan is a mapping with 'tests:' \(and optionally 'name:' and 'defaults:'\)$
"unknown top-level key '%s'; did "|-|name: t\ndefault:\n  iters: 5\ntests:\n  - op: all_reduce\n|@F:2: unknown top-level key 'default'; did you mean 'defaults'\?$
"unknown top-level key '%s'; "|-|name: t\ncolour: blue\ntests:\n  - op: all_reduce\n|@F:2: unknown top-level key 'colour'; plans have name, defaults, tests and switches$
"'name' must be a single value"|-|name: [x]\ntests:\n  - op: all_reduce\n|@F:1: 'name' must be a single value$
"%s:1: the plan is empty; a plan is "|-|# nothing but a comment\n|@F:1: the plan is empty; a plan is a mapping with 'tests:' \(see shakedown-plan\(5\)\)$
"unknown key '%s'; did you mean "|-|name: t\ntests:\n  - op: all_reduce\n    expct:\n      busbw: 20\n|@F:4: unknown key 'expct'; did you mean 'expect'\?$
"'tests:' must be a non-empty list of tests"|-|name: t\ntests: []\n|@F:2: 'tests:' must be a non-empty list of tests$
"'tests:' must be a non-empty list of tests"|-|name: t\ntests:\n  op: all_reduce\n|@F:3: 'tests:' must be a non-empty list of tests$
"'tests:' must be a non-empty list of tests"|-|name: t\ndefaults:\n  iters: 5\n|@F:1: 'tests:' must be a non-empty list of tests$
"test %zu has no 'op'"|-|name: t\ntests:\n  - op: all_reduce\n  - dtype: float64\n|@F:4: test 2 has no 'op'$
"%s: unknown scope '%s'; did you "|-|name: t\ntests:\n  - op: all_reduce\n  - op: broadcast\n    scope: nodes\n|@F:4: unknown scope 'nodes'; did you mean 'node'\?$
"%s: unknown scope '%s'; use world, "|-|name: t\ntests:\n  - op: all_reduce\n  - op: broadcast\n    scope: galaxy\n|@F:4: unknown scope 'galaxy'; use world, node, rail, gpu-pairs, node-pairs \(or node-pairs:ring, node-pairs:random:K, node-pairs:adaptive\[:K\] with K from 0 to 64; :one for one rank per node\), or split:K for groups of K consecutive ranks$
"%s: unknown scope '%s'; use world, "|-|name: t\ntests:\n  - op: all_reduce\n  - op: broadcast\n    scope: node-pairs:random:0\n|@F:4: unknown scope 'node-pairs:random:0'
"%s: scope '%s': the rounds after "|-|name: t\ntests:\n  - op: all_reduce\n    scope: node-pairs:adaptive:65\n|@F:3: scope 'node-pairs:adaptive:65': the rounds after the first must be a whole number from 0 to 64, e\.g\. node-pairs:adaptive:1$
"%s: scope '%s': the rounds after "|-|name: t\ntests:\n  - op: all_reduce\n    scope: node-pairs:adaptive:x:one\n|@F:3: scope 'node-pairs:adaptive:x:one': the rounds
"seed '%s' must be a whole number "|-|name: t\ntests:\n  - op: all_reduce\n    scope: node-pairs:adaptive\n    seed: -3\n|@F:5: seed '-3' must be a whole number from 0 to 2\^64-1 \(decimal or 0x hex\)$
"seed '%s' must be a whole number "|-|name: t\ntests:\n  - op: all_reduce\n    seed: 0x1g\n|@F:4: seed '0x1g' must be a whole number
"'switches' must be a mapping of switch "|-|name: t\nswitches: [s0]\ntests:\n  - op: all_reduce\n|@F:2: 'switches' must be a mapping of switch name: hostlist, e\.g\. \{s0: "node\[01-16\]", s1: "node\[17-32\]"\}$
"a switch is 'NAME: HOSTLIST' with "|-|name: t\nswitches:\n  s0: "n1 n2"\ntests:\n  - op: all_reduce\n|@F:3: a switch is 'NAME: HOSTLIST' with no spaces or '=' in either, e\.g\. s0: "node\[01-16\]"$
"switch %s: %s", name, why|-|name: t\nswitches:\n  s0: "n[1-2"\ntests:\n  - op: all_reduce\n|@F:3: switch s0: malformed hostlist item 'n\[1-2': no '\]' closes the '\['$
"'switches' is longer than %zu "|-|name: t\nswitches: {@LONGSW}\ntests:\n  - op: all_reduce\n|@F:2: 'switches' is longer than 4095 characters; give compressed hostlists \(node\[001-512\]\) or use Slurm's topology\.conf$
"%s: scope %s needs a multiple of "|run --op all_reduce --scope split:3|-|--op: scope split:3 needs a multiple of 3 ranks, the job has 1$
"%s: unknown op '%s'%s%s%s"|-|name: t\ntests:\n  - op: all_reduce\n  - op: allreduce\n|@F:4: unknown op 'allreduce'; did you mean 'all_reduce'\?$
"%s: unknown op '%s'%s%s%s"|-|name: t\ntests:\n  - op: all_reduce\n  - op: [broadcast, frobnicate]\n|@F:4: unknown op 'frobnicate'$
"%s: %s needs at least %d "|run --op pt2pt|-|--op: pt2pt needs at least 2 ranks, the job has 1; run more ranks or drop it$
"%s: %s needs at least %d "|run --local 2 --op pt2pt --scope split:1|-|--op: pt2pt needs at least 2 ranks, the group has 1; run more ranks or drop it$
"%s: unknown data "|-|name: t\ntests:\n  - op: all_reduce\n    dtype: [float32, float33]\n|@F:3: unknown data type 'float33'; did you mean 'float32'\?$
"%s: unknown data "|-|name: t\ntests:\n  - op: all_reduce\n    dtype: complex128\n|@F:3: unknown data type 'complex128'$
"%s: min_bytes "|-|name: t\ntests:\n  - op: all_reduce\n    min_bytes: 1M\n    max_bytes: 1K\n|@F:3: min_bytes \(-b\) is larger than max_bytes \(-e\)$
"%s: expect: at %s "|-|name: t\ntests:\n  - op: all_reduce\n    min_bytes: 1K\n    max_bytes: 4K\n    expect: {busbw: 1, at: 8K}\n|@F:3: expect: at 8K is outside the test's sizes 1K to 4K; judge a size it measures$
"%s: more than %d "|-|name: t\ntests:\n  - op: all_reduce\n    min_bytes: 1\n    max_bytes: 200000\n    step_bytes: 1\n|@F:3: more than 100000 sizes from min_bytes to max_bytes; use a larger step$
"%s: unknown "|-|name: t\ntests:\n  - op: all_reduce\n    redop: summ\n|@F:3: unknown reduction 'summ'; did you mean 'sum'\?$
"%s: unknown "|-|name: t\ntests:\n  - op: all_reduce\n    redop: [sum, xor]\n|@F:3: unknown reduction 'xor'$
"%s: root '%s' is not a "|-|name: t\ntests:\n  - op: all_reduce\n  - op: broadcast\n    root: [0, 4]\n|@F:4: root '4' is not a rank from 0 to 3 \(or 'all'\)$
"%s: root '%s' is not a "|-|name: t\ntests:\n  - op: all_reduce\n  - op: broadcast\n    scope: node\n    root: 1\n|@F:4: root '1' is not a rank from 0 to 0 \(or 'all'\)$
"%s: cannot read plan: %s|plan check FILE|-|@F: cannot read plan: No such file or directory
"%s: the plan file is empty"|plan check FILE|@empty|@F: the plan file is empty$
"%s: not a plan file (%s); name a regular "|plan check FILE|@dir|@F: not a plan file \(a directory\); name a regular file$
"%s: not a plan file (%s); name a regular "|plan check FILE|@fifo|@F: not a plan file \(a FIFO\); name a regular file$
"%s: not a plan file (%s); name a regular "|plan check /dev/zero|-|/dev/zero: not a plan file \(a device\); name a regular file$
"%s: %lld bytes is more than a plan (at "|plan check FILE|@huge|@F: 1100000 bytes is more than a plan \(at most 1048576\); is it the right file\?$
"%s: no test of the plan fits a job of %d "|-|name: t\ntests:\n  - {op: all_reduce, scope: split:3}\n  - {op: pt2pt, scope: split:1}\n|@F: no test of the plan fits a job of 4 ranks; run more ranks$
"%s: no test of the plan fits a job of %d "|plan check --ranks 1 FILE|name: t\ntests:\n  - op: pt2pt\n|@F: no test of the plan fits a job of 1 rank; run more ranks$
"too many plan files; at most 256"|plan check MANY|-|too many plan files; at most 256$
"--ranks '%s' must be a number of "|plan check --ranks 0 FILE|name: t\ntests:\n  - op: all_reduce\n|--ranks '0' must be a number of ranks from 1 to 1048576$
"%s '%s' must be a number from 1 to "|plan expand --nodes many FILE|name: t\ntests:\n  - op: all_reduce\n|--nodes 'many' must be a number from 1 to 1048576$
"%s '%s' must be a number from 1 to "|plan expand --ranks-per-node 0 FILE|name: t\ntests:\n  - op: all_reduce\n|--ranks-per-node '0' must be a number from 1 to 1048576$
"--busbw '%s' must be a positive "|plan expand --busbw fast FILE|name: t\ntests:\n  - op: all_reduce\n|--busbw 'fast' must be a positive number of GB/s$
"option '%s' needs a value"|plan check FILE --ranks|name: t\ntests:\n  - op: all_reduce\n|option '--ranks' needs a value$
"unknown option '%s'; see 'shakedown help "|plan check --nodez 4 FILE|name: t\ntests:\n  - op: all_reduce\n|unknown option '--nodez'; see 'shakedown help plan'$
"say check or expand, and a plan file; see "|plan|-|say check or expand, and a plan file; see 'shakedown help plan'$
"--nodes x --ranks-per-node is more than "|plan expand --nodes 2048 --ranks-per-node 1024 FILE|name: t\ntests:\n  - op: all_reduce\n|--nodes x --ranks-per-node is more than 1048576 ranks$
"unknown subcommand '%s'; %s%s%s"|plan chek FILE|name: t\ntests:\n  - op: all_reduce\n|unknown subcommand 'chek'; did you mean 'check'\?$
"unknown subcommand '%s'; %s%s%s"|plan lint FILE|name: t\ntests:\n  - op: all_reduce\n|unknown subcommand 'lint'; use check or expand$
"%s needs a plan file"|plan check|-|check needs a plan file$
"expand takes one plan file, not %d"|plan expand FILE FILE|name: t\ntests:\n  - op: all_reduce\n|expand takes one plan file, not 2$
"'%s' is given twice (first on line "|-|name: t\ntests:\n  - op: all_reduce\n    iters: 5\n    iters: 6\n|@F:5: 'iters' is given twice \(first on line 4\); keep one$
"'%s:' is given twice (first on line "|-|name: t\ntests:\n  - op: all_reduce\ntests:\n  - op: broadcast\n|@F:4: 'tests:' is given twice \(first on line 2\); keep one$
"expect: '%s' is given twice (first "|-|name: t\ntests:\n  - op: all_reduce\n    expect:\n      busbw: 1\n      busbw: 2\n|@F:6: expect: 'busbw' is given twice \(first on line 5\); keep one$
"%s:%lu: a second YAML "|-|name: t\ntests:\n  - op: all_reduce\n---\ntests:\n  - op: broadcast\n|@F:5: a second YAML document; a plan is one document
"the '%s' list is too long (at most "|-|name: t\ntests:\n  - op: [@LONGLIST]\n|@F:3: the 'op' list is too long \(at most 255 characters\); split it over two tests$
"'%s' is too long (at most %zu "|-|name: t\ntests:\n  - op: @LONG\n|@F:3: 'op' is too long \(at most 255 characters\)$
"%s: a NUL byte at offset %zu; a "|-|name: t\ntests:\n  - op: all_reduce\0\n|@F: a NUL byte at offset 33; a plan is text$
"%s '%s' is more than 1T, larger "|-|name: t\ntests:\n  - op: all_reduce\n    max_bytes: 18446744073709551615\n|@F:4: max_bytes '18446744073709551615' is more than 1T, larger than any buffer a rank can hold; use a smaller size$
"step_factor '%s' must be a number "|-|name: t\ntests:\n  - op: all_reduce\n    step_factor: 1\n|@F:4: step_factor '1' must be a number above 1 \(for even steps use step_bytes\)$
"%s", oerr);|plan expand --busb 10 FILE|name: t\ntests:\n  - op: all_reduce\n|'--busb' is short for '--busbw'; write options out in full$
ROWS

# Message sites no plan and no command line can reach, and why.
cat >unreachable <<'ROWS'
"'%s' is not a setting plans have"|set_field's last resort: every key of test_keys is handled before it
"%s: cannot read the plan file: %s"|an I/O error part way through a regular file (EIO): not something a test can plant here
"%s, ~%s for the %d rank%s on %s, which "|not a plan file's error but a run's (exit 3): the buffers against the memory the devices report; run_faults.t and unit_job.c plant it
ROWS

long=$(printf '%520s' '' | tr ' ' x)
longlist=$(printf 'all_reduce, %.0s' $(seq 1 30))broadcast
many=$(seq 1 300 | tr '\n' ' ')
longsw=$(seq 1 300 | sed 's/.*/s&: "node&-[01-16]"/' | paste -sd, -)
n=0
while IFS='|' read -r site cmd text want; do
	n=$((n + 1))
	f=p$n.yaml
	case $text in
	-) ;;
	@empty) : >"$f" ;;
	@dir) mkdir "$f" ;;
	@fifo) mkfifo "$f" ;;
	@huge) head -c 1100000 /dev/zero | tr '\0' '#' >"$f" ;;
	*) printf '%b' "$text" |
		sed -e "s/@LONGLIST/$longlist/" -e "s/@LONGSW/$longsw/" \
		    -e "s/@LONG/$long/" >"$f" ;;
	esac
	[ "$cmd" = - ] && cmd="plan check --ranks 4 FILE"
	args=$(printf '%s\n' "$cmd" | sed -e "s/FILE/$f/g" -e "s/MANY/$many/")
	case $cmd in
	run*) prefix="shakedown: " ;;
	*) prefix="shakedown plan: " ;;
	esac
	case $want in
	@F*) want="p$n\\.yaml${want#@F}" ;;
	esac
	# shellcheck disable=SC2086 # the arguments are words
	run -t 30 $SHAKEDOWN $args
	is "$rc" 2 "row $n: exit 2 ($cmd)"
	ok '[ -z "$out" ] && [ "$(printf "%s\n" "$err" | wc -l)" -eq 1 ]' \
		"row $n: one line on stderr, nothing on stdout"
	like "$err" "^$prefix$want" "row $n: $prefix$want"
done <rows

# Every site of the table is one format string of the source, and the
# table with the unreachable ones covers every site.  A site is a call
# that writes a message: fail(p, ...) and snprintf(err, errlen, ...) in
# lib/plan.c (but fail's own, which formats the others),
# sd_usage_error("plan", "...") in src/cmd_plan.c.  A message written another way is not counted: keep
# to these forms.
PLAN_C=$top_srcdir/lib/plan.c
CMD_C=$top_srcdir/src/cmd_plan.c
nsites=$(( $(grep -E '(^|[^a-z_])fail\(p, |snprintf\([a-z>-]*err, [a-z>-]*errlen,' \
		"$PLAN_C" | grep -cvF '"%s:%lu: %s", p->file') +
	$(grep -c 'sd_usage_error("plan", "' "$CMD_C") ))
cut -d'|' -f1 rows unreachable | sort -u >sites
bad=
: >where
while IFS= read -r site; do
	hits=$(grep -HnF -- "$site" "$PLAN_C" "$CMD_C" | cut -d: -f1,2)
	if [ "$(printf '%s\n' "$hits" | grep -c .)" -ne 1 ]; then
		bad="$bad [$site]"
	else
		printf '%s\n' "$hits" >>where
	fi
done <sites
is "$bad" "" "every site named in the table is in the source exactly once"
is "$(sort -u where | wc -l | tr -d ' ')" "$(wc -l <sites | tr -d ' ')" \
	"no two sites of the table are the same message"
is "$(wc -l <sites | tr -d ' ')" "$nsites" \
	"the table covers all $nsites message sites of lib/plan.c and src/cmd_plan.c"
ok "[ $n -ge $nsites ]" "$n rows for $nsites sites"

# A test may set what NCCL takes per communicator: it checks, and the
# canonical text holds the test's env after its defaults'.
cat >env.yaml <<'EOF'
name: env
defaults:
  env: {NCCL_MAX_CTAS: 16}
tests:
  - op: all_reduce
    env: {NCCL_MIN_CTAS: 4, NCCL_NET: Socket, NCCL_CGA_CLUSTER_SIZE: 2}
  - op: broadcast
EOF
run -t 30 $SHAKEDOWN plan check --ranks 4 env.yaml
is "$rc" 0 "a plan whose env NCCL takes per communicator checks"
is "$err" "" "without a word on stderr"
run -t 30 $SHAKEDOWN plan expand --ranks 4 env.yaml
like "$out" "all_reduce.*env: \{NCCL_MAX_CTAS: 16, NCCL_MIN_CTAS: 4, NCCL_NET: Socket, NCCL_CGA_CLUSTER_SIZE: 2\}\}" \
	"its text holds the defaults' env and then the test's"
like "$out" "broadcast.*env: \{NCCL_MAX_CTAS: 16\}\}" "and the defaults' alone"

# Good plans: expect and retries check, merge over the defaults key by
# key, and are held by the canonical text.
cat >good.yaml <<'EOF'
name: good
defaults:
  min_bytes: 1K
  max_bytes: 4M
  expect: {busbw: 10, at: 1M}
  retries: 1
tests:
  - op: all_reduce
    expect: {peers: 0.8, time: 2ms}
    retries: 3
  - {op: sendrecv, scope: node-pairs, expect: {mad: 5, baseline: 0.9, time: 250}}
  - {op: all_gather, scope: split:2, expect: {time: 1s}, retries: 0}
  - {op: broadcast, min_bytes: 8K, max_bytes: 8K, expect: {at: 8K}}
  - {op: reduce_scatter, retries: 10}
EOF
run -t 30 $SHAKEDOWN plan check --ranks 4 good.yaml
is "$rc" 0 "a plan with expect and retries checks"
is "$out" "good.yaml: ok: 5 tests on 4 ranks" "and says how many tests"
is "$err" "" "without a word on stderr"
run -t 30 $SHAKEDOWN plan expand --nodes 2 --ranks-per-node 2 good.yaml
is "$rc" 0 "it expands"
like "$out" "all_reduce.*, expect: \{busbw: 10, time: 2000us, at: 1048576, peers: 0\.8\}, retries: 3\}" \
	"expect merges over the defaults key by key; time in us; retries the test's"
like "$out" "sendrecv.*scope: node-pairs, expect: \{busbw: 10, time: 250us, at: 1048576, mad: 5, baseline: 0\.9\}, retries: 1\}" \
	"a plain time is microseconds; retries from the defaults"
like "$out" "all_gather.*scope: split:2, expect: \{busbw: 10, time: 1e\+06us, at: 1048576\}, retries: 0\}" \
	"time in seconds; retries 0"
like "$out" "broadcast.*min_bytes: 8192, max_bytes: 8192, .*expect: \{busbw: 10, at: 8192\}, retries: 1\}" \
	"at replaced by the test's"
like "$out" "reduce_scatter.*, retries: 10\}" "retries 10, the most"
for f in "$top_srcdir"/plans/*.yaml "$top_srcdir"/plans/profiles/*.yaml; do
	run -t 30 $SHAKEDOWN plan expand --nodes 3 --ranks-per-node 2 "$f"
	[ "$rc" = 0 ] || fail "${f#$top_srcdir/}: plan expand exit $rc: $err"
done
pass "every shipped plan expands on 3 hosts of 2 ranks"

# No expectation to judge: neither expect nor retries is in the text (at
# alone judges nothing; retries without an expectation measure nothing
# again).
printf 'name: plain\ntests:\n  - {op: all_reduce, retries: 2}\n  - {op: broadcast, expect: {at: 1M}}\n' >plain.yaml
run -t 30 $SHAKEDOWN plan expand --ranks 2 plain.yaml
is "$rc" 0 "a plan with retries or at alone expands"
unlike "$out" "expect:|retries:" "and its text has neither expect nor retries"

done_testing
