#!/usr/bin/env python3
"""Independent answer extraction for the real DeepSpeed fixtures in this folder.

Written from reading the logs, NOT from shakedown's parser.  Prints one TSV row per
file (header first).  Run:  python3 answers.py   (from this directory)

Definitions (see NOTES in ANSWERS):
  step_lines      lines carrying a training step WITH a loss as printed by DeepSpeed itself:
                  the pipeline engine line  "steps: N loss: X iter time (s): T samples/sec: S"
                  (PipelineEngine prints it on global rank 0 only, so no de-duplication needed).
  engine_step_lines  lines "[Rank 0] step=N, skipped=K, lr=[...], mom=[...]" (log_dist, rank 0
                  only); these carry NO loss.
  throughput_lines   lines of timer.py containing "RunningAvgSamplesPerSec=" (rank 0 only).
"""
import re
import sys
import os

FILES = [
    "ds076_oldtimer_gpt2_ptb_1gpu_dsexamples.log",
    "ds_chat_step1_opt1.3b_16gpu_dsexamples.log",
    "ds0162_chat_dpo_opt350m_8gpu_two_engines_dsexamples.log",
    "ds0144_chat_opt350m_16nodes_pdsh_prefix_lambdalabs.log",
    "ds_pipe_megads_2node_tp2pp4dp2_node0_steps_only.log",
    "ds_pipe_megads_qwen7b_tp4_500steps_with_megatron_lines.log",
    "ds_flops_profiler_output_only_llava.txt",
]

PIPE = re.compile(r"^steps: (\d+) loss: (\S+) iter time \(s\): (\S+) samples/sec: (\S+)\s*$")
ENG = re.compile(r"\[Rank 0\] step=(\d+), skipped=(\d+), lr=")
THR = re.compile(r"timer\.py:\d+:stop\] (.*?), RunningAvgSamplesPerSec=([0-9.eE+-]+), "
                 r"CurrSamplesPerSec=([0-9.eE+-]+)")
# DeepSpeed config print:  "[config.py:NNN:print]   train_batch_size ............. 32"
def cfg(name):
    return re.compile(r"\[config\.py:\d+:print\]\s+" + re.escape(name) + r"\s+\.*\s*(\S+)\s*$")
CFG_TBS = cfg("train_batch_size")
CFG_MBS = cfg("train_micro_batch_size_per_gpu")
CFG_GAS = cfg("gradient_accumulation_steps")
CFG_WS = cfg("world_size")
VER = re.compile(r"DeepSpeed info: version=([^,]+),")
# Megatron(-DeepSpeed) arguments block: "  seq_length ...................... 2048"
def marg(name):
    return re.compile(r"^\s+" + re.escape(name) + r" \.{2,} (\S+)\s*$")
M_GBS, M_MBS, M_SEQ, M_WS = marg("global_batch_size"), marg("micro_batch_size"), marg("seq_length"), marg("world_size")
# Megatron iteration line (only in the qwen7b file)
MEG = re.compile(r" iteration\s+(\d+)/\s*(\d+) \|.*\| lm loss: (\S+) \|")
# DeepSpeed-Chat command lines
CMD_MSL = re.compile(r"--max_seq_len'?,? '?(\d+)")
CMD_PDB = re.compile(r"--per_device_train_batch_size'?,? '?(\d+)")
CMD_GAS = re.compile(r"--gradient_accumulation_steps'?,? '?(\d+)")
DWS = re.compile(r"dist_world_size=(\d+)")
# Megatron-DeepSpeed: number of micro-batches per global batch == gradient accumulation
M_NMB = re.compile(r"setting number of micro-batches to constant (\d+)")


def uniq(vals):
    out = []
    for v in vals:
        if v not in out:
            out.append(v)
    return "/".join(out) if out else "-"


def analyse(path):
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8", errors="replace")
    lines = text.split("\n")
    pipe, eng, thr, meg = [], [], [], []
    tbs, mbs, gas, ws, ver = [], [], [], [], []
    mgbs, mmbs, mseq, mws = [], [], [], []
    msl, pdb, cgas, dws = [], [], [], []
    for ln in lines:
        # strip a pdsh "host: " prefix if present (only the LambdaLabs file has one)
        body = re.sub(r"^ml-512-node-\d+: ", "", ln)
        m = PIPE.match(body)
        if m:
            pipe.append(m.groups())
        m = ENG.search(body)
        if m:
            eng.append(m.groups())
        m = THR.search(body)
        if m:
            thr.append(m.groups())
        m = MEG.search(body)
        if m:
            meg.append(m.groups())
        for rx, acc in ((CFG_TBS, tbs), (CFG_MBS, mbs), (CFG_GAS, gas), (CFG_WS, ws),
                        (M_GBS, mgbs), (M_MBS, mmbs), (M_SEQ, mseq), (M_WS, mws)):
            m = rx.search(body)
            if m:
                acc.append(m.group(1))
        m = VER.search(body)
        if m:
            ver.append(m.group(1))
        for rx, acc in ((CMD_MSL, msl), (CMD_PDB, pdb), (CMD_GAS, cgas), (DWS, dws), (M_NMB, cgas)):
            for mm in rx.finditer(body):
                acc.append(mm.group(1))
    row = {}
    row["step_lines"] = str(len(pipe))
    row["first_step"] = pipe[0][0] if pipe else "-"
    row["last_step"] = pipe[-1][0] if pipe else "-"
    row["loss_at_first_step"] = pipe[0][1] if pipe else "-"
    row["loss_at_last_step"] = pipe[-1][1] if pipe else "-"
    row["engine_step_lines"] = str(len(eng))
    row["engine_first_step"] = eng[0][0] if eng else "-"
    row["engine_last_step"] = eng[-1][0] if eng else "-"
    row["engine_last_skipped"] = eng[-1][1] if eng else "-"
    row["throughput_lines"] = str(len(thr))
    # the step a timer line names: global_step=G (DeepSpeed >= 0.8 format
    # "epoch=E/micro_step=M/global_step=G"); in the old format "E/M" only the
    # micro step M is printed, reported here as "micro:M".
    def tstep(prefix):
        m = re.search(r"global_step=(\d+)", prefix)
        if m:
            return m.group(1)
        m = re.fullmatch(r"(\d+)/(\d+)", prefix.strip())
        return "micro:" + m.group(2) if m else "?"
    row["timer_first_step"] = tstep(thr[0][0]) if thr else "-"
    row["timer_last_step"] = tstep(thr[-1][0]) if thr else "-"
    row["train_batch_size"] = uniq(tbs + mgbs)
    row["micro_batch_per_gpu"] = uniq(mbs + mmbs + pdb)
    row["grad_accum"] = uniq(gas + cgas)
    row["world_size"] = uniq(ws + mws + dws)
    row["seq_length"] = uniq(mseq + msl)
    if pipe:
        row["last_samples_per_sec"] = pipe[-1][3]
    elif thr:
        row["last_samples_per_sec"] = thr[-1][2]
    else:
        row["last_samples_per_sec"] = "-"
    row["ds_version"] = uniq(ver)
    row["megatron_iter_lines"] = str(len(meg))
    row["megatron_first_last"] = (f"{meg[0][0]}:{meg[0][2]}..{meg[-1][0]}:{meg[-1][2]}" if meg else "-")
    return row


COLS = ["step_lines", "first_step", "last_step", "loss_at_first_step", "loss_at_last_step",
        "engine_step_lines", "engine_first_step", "engine_last_step", "engine_last_skipped",
        "throughput_lines", "timer_first_step", "timer_last_step", "train_batch_size", "micro_batch_per_gpu", "grad_accum",
        "world_size", "seq_length", "last_samples_per_sec", "ds_version",
        "megatron_iter_lines", "megatron_first_last"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    print("\t".join(["file"] + COLS))
    for f in FILES:
        r = analyse(os.path.join(here, f))
        print("\t".join([f] + [r[c] for c in COLS]))


# --- ROWS (issue 32): `python3 answers.py --rows` ---------------------------------------------
# The rows `shakedown ingest` should make of the DeepSpeed logs, from their raw bytes: rows, first and
# last step, and the mean step time over the timed rows as shakedown-train(7) defines it (the first row
# is never timed, nor a row whose row before is within the 2 default warm-up steps of the first; each
# row weighs its span of steps).  Quoted in ANSWERS (NOTES, ROWS).

def summary(rows, warmup=2):
    """rows: [(step, seconds)] in file order -> one line."""
    s = k = r = 0
    for i in range(1, len(rows)):
        if rows[i - 1][0] >= rows[0][0] + warmup:
            span = rows[i][0] - rows[i - 1][0]
            s += rows[i][1] * span
            k += span
            r += 1
    return "rows %d first %d last %d timed_rows %d step_s %.4f" % (
        len(rows), rows[0][0], rows[-1][0], r, s / k if k else -1)


def read_lines(name):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, name), "rb") as fh:
        return fh.read().decode("utf-8", errors="replace").split("\n")


def conf_value(lines, name):
    rx = cfg(name)
    for ln in lines:
        m = rx.search(ln)
        if m:
            return int(m.group(1))
    return None


OLD_THR = re.compile(r"\] (\d+)/(\d+), RunningAvgSamplesPerSec=[^,]*, CurrSamplesPerSec=([0-9.eE+-]+)")
NEW_THR = re.compile(r"global_step=(\d+), RunningAvgSamplesPerSec=[^,]*, CurrSamplesPerSec=([0-9.eE+-]+)")
STAMP = re.compile(r"(\d\d):(\d\d):(\d\d),(\d+)")


def rows_main():
    # DeepSpeed 0.7.6: "E/M, RunningAvgSamplesPerSec=R, CurrSamplesPerSec=C"; M counts micro steps, the
    # optimizer step is M / gradient_accumulation_steps, a step's time train_batch_size / C
    f = "ds076_oldtimer_gpt2_ptb_1gpu_dsexamples.log"
    lines = read_lines(f)
    gas, tbs = conf_value(lines, "gradient_accumulation_steps"), conf_value(lines, "train_batch_size")
    rows, epochs = [], set()
    for ln in lines:
        m = OLD_THR.search(ln)
        if m:
            epochs.add(int(m.group(1)))
            rows.append((int(m.group(2)) // gas, tbs / float(m.group(3))))
    print("%s (gradient_accumulation_steps %d, train_batch_size %d, epochs printed %s):" % (
        f, gas, tbs, sorted(epochs)))
    print("  " + summary(rows))
    # the engine's "[Rank 0] step=N" line printed right before a timer line (same step() call) names
    # that step: its M is N x gas
    pairs = bad = 0
    for a, b in zip(lines, lines[1:]):
        e, t = ENG.search(a), OLD_THR.search(b)
        if e and t:
            pairs += 1
            bad += int(t.group(2)) != gas * int(e.group(1))
    print("  engine step=N lines right before a timer line: %d, M != N x %d: %d" % (pairs, gas, bad))

    # DeepSpeed-Chat step 1: no configuration block; the global batch from the command line:
    # per_device_train_batch_size x ranks x gradient_accumulation_steps
    f = "ds_chat_step1_opt1.3b_16gpu_dsexamples.log"
    lines = read_lines(f)
    pd, ga = int(CMD_PDB.search(lines[0]).group(1)), int(CMD_GAS.search(lines[0]).group(1))
    ranks = len(set(re.findall(r"Process (\d+) exits successfully", "\n".join(lines))))
    g = pd * ranks * ga
    rows, gaps, last = [], [], None
    for ln in lines:
        m = NEW_THR.search(ln)
        if not m:
            continue
        step, curr = int(m.group(1)), float(m.group(2))
        rows.append((step, g / curr))
        h = STAMP.search(ln)
        w = int(h.group(1)) * 3600 + int(h.group(2)) * 60 + int(h.group(3)) + int(h.group(4)) / 1000
        # independent of the command line: the wall clock between two timer lines 10 steps apart,
        # per step, times CurrSamplesPerSec = the samples of a step
        if last and step - last[0] == 10 and w > last[1]:
            gaps.append((w - last[1]) / 10 * curr)
        last = (step, w)
    gaps.sort()
    print("%s (per-device %d x %d ranks x accumulation %d = global batch %d):" % (f, pd, ranks, ga, g))
    print("  " + summary(rows))
    print("  wall clock per step x CurrSamplesPerSec over %d gaps: median %.1f samples" % (
        len(gaps), gaps[(len(gaps) - 1) // 2]))

    # the pipeline engine's "steps: N loss: X iter time (s): T samples/sec: S", and Megatron's arguments
    for f in ("ds_pipe_megads_2node_tp2pp4dp2_node0_steps_only.log",
              "ds_pipe_megads_qwen7b_tp4_500steps_with_megatron_lines.log"):
        lines = read_lines(f)
        rows = [(int(m.group(1)), float(m.group(3))) for m in map(PIPE.match, lines) if m]
        args = []
        for a in ("world_size", "seq_length", "num_layers", "hidden_size"):
            vals = [marg(a).search(ln).group(1) for ln in lines if marg(a).search(ln)]
            args.append("%s=%s" % (a, uniq(vals)))
        print("%s (pipeline lines):" % f)
        print("  " + summary(rows))
        print("  Megatron arguments: " + " ".join(args))
    # and Megatron-DeepSpeed's own iteration lines, "elapsed time per iteration (ms): T"
    f = "ds_pipe_megads_qwen7b_tp4_500steps_with_megatron_lines.log"
    rows = []
    for ln in read_lines(f):
        m = re.search(r" iteration\s+(\d+)/\s*\d+ \|.*\| elapsed time per iteration \(ms\): ([0-9.]+) \|", ln)
        if m:
            rows.append((int(m.group(1)), float(m.group(2)) / 1000))
    print("%s (Megatron iteration lines):" % f)
    print("  " + summary(rows))


if __name__ == "__main__":
    sys.exit(rows_main() if sys.argv[1:] == ["--rows"] else main())
