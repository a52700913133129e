#!/usr/bin/env python3
"""Independent ground truth for the real HF/ms-swift fixtures in this folder.

Reads the raw bytes of each fixture (no line splitting, so '\r' is kept) and
prints the ANSWERS table (tab-separated) followed by per-file layout notes.
It does not use shakedown or any of its code.  Usage:

    python3 answers.py            # from this directory

Columns:
  loss_rows   number of logged *training* dicts that carry a 'loss' key
              (stdout: occurrences of the bytes  {'loss':  ; jsonl: lines whose
              JSON object has "loss"; trainer_state: log_history entries with
              "loss").  eval dicts ('eval_loss') and the final summary
              ('train_loss') are not counted.
  step_first / step_last   step of the first / last such row, only where the
              file itself says it (see step_source); otherwise "-".
  loss_first / loss_last   the loss text exactly as printed (quotes of the
              transformers-5 string format stripped).
  train_runtime / train_steps_per_second   as printed in the final summary.
  total_steps total steps as printed, see total_source.
"""
import glob
import json
import os
import re
import sys

BAR = re.compile(rb"(\d+)/(\d+) \[[^\]]*\] *\Z")       # a tqdm bar that ends right here
NUM = rb"'?([^,'}]+)'?"


def field(txt, key):
    m = re.search(rb"'" + re.escape(key) + rb"': " + NUM, txt)
    return m.group(1).decode() if m else None


def stdout_file(path):
    d = open(path, "rb").read()
    rows, notes = [], {}
    cnt = dict(bar_then_dict=0, bar_cr_blank_cr_dict=0, after_newline=0,
               other_prefix=0, dict_ends_with_cr=0, dict_split=0)
    for m in re.finditer(rb"\{'loss': ", d):
        s = m.start()
        e = d.find(b"}", s)
        txt = d[s:e + 1]
        if b"\r" in txt or b"\n" in txt:
            cnt["dict_split"] += 1
        if d[e + 1:e + 2] == b"\r":
            cnt["dict_ends_with_cr"] += 1
        pre = d[max(0, s - 400):s]
        step = None
        gs = re.search(rb"'global_step/max_steps': '(\d+)/(\d+)'", txt)
        if gs:
            step, total = int(gs.group(1)), int(gs.group(2))
        # how the dict is attached to what precedes it on its physical line
        mm = re.search(rb"\r( +)\r\Z", pre)
        if mm and BAR.search(pre[:mm.start()]):
            cnt["bar_cr_blank_cr_dict"] += 1
            if step is None:                       # tqdm.write(): bar n/N, clear, dict
                step = ("bar", int(BAR.search(pre[:mm.start()]).group(1)))
        elif BAR.search(pre):
            cnt["bar_then_dict"] += 1              # no '\r' or '\n' between bar and dict
        elif pre.endswith(b"\n") or s == 0:
            cnt["after_newline"] += 1
        else:
            cnt["other_prefix"] += 1
        rows.append((step, field(txt, b"loss")))
    if cnt["bar_cr_blank_cr_dict"] != len(rows):
        # stdout is block-buffered: dicts arrive in batches, the bar before a
        # dict is where the buffer was flushed, not the step it was logged at
        rows = [(None if isinstance(r[0], tuple) else r[0], r[1]) for r in rows]
    # steps at which tqdm cleared its bar for a write (\r<blanks>\r after bar n/N)
    clears = [(int(m.group(1)), int(m.group(2)))
              for m in re.finditer(rb"(\d+)/(\d+) \[[^\]\r\n]*\] *\r +\r", d)]
    first = d.find(b"{'loss': ")
    tb = re.findall(rb"\| *\d+/(\d+) \[", d[:first])
    clears = [n for n, t in clears if tb and t == int(tb[-1])]   # training bar only
    cnt["tqdm_clear_events"] = len(clears)
    cnt["clear_first"] = clears[0] if clears else -1
    cnt["clear_last"] = clears[-1] if clears else -1
    rt = re.search(rb"\{'train_runtime': [^}]*\}", d)
    rtt = rt.group(0) if rt else b""
    total, tsrc = None, "-"
    gsm = re.findall(rb"'global_step/max_steps': '\d+/(\d+)'", d)
    if gsm:
        total, tsrc = gsm[-1].decode(), "global_step/max_steps"
    else:
        # total of the training bar: the bar nearest before the first loss dict
        first = d.find(b"{'loss': ")
        bars = re.findall(rb"\| *\d+/(\d+) \[", d[:first])
        if bars:
            total, tsrc = bars[-1].decode(), "tqdm bar n/N"
    return rows, rtt, total, tsrc, cnt


def out_row(name, rows, runtime, tsps, total, tsrc, srcs):
    steps = [r[0] for r in rows]
    def st(x):
        if x is None:
            return "-"
        return str(x[1]) if isinstance(x, tuple) else str(x)
    src = "-"
    if rows and steps[0] is not None:
        src = srcs
    print("\t".join([name, str(len(rows)),
                     st(steps[0]) if rows else "-", st(steps[-1]) if rows else "-", src,
                     rows[0][1] if rows else "-", rows[-1][1] if rows else "-",
                     runtime or "-", tsps or "-", total or "-", tsrc]))


def main():
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    print("file\tloss_rows\tstep_first\tstep_last\tstep_source\tloss_first\tloss_last\t"
          "train_runtime\ttrain_steps_per_second\ttotal_steps\ttotal_source")
    layout = []
    for f in sorted(glob.glob("*")):
        if f.endswith(".log"):
            rows, rtt, total, tsrc, cnt = stdout_file(f)
            src = "global_step/max_steps" if rows and isinstance(rows[0][0], int) else "tqdm bar before tqdm.write clear"
            out_row(f, rows, field(rtt, b"train_runtime"), field(rtt, b"train_steps_per_second"),
                    total, tsrc, src)
            layout.append((f, cnt))
        elif f.endswith(".jsonl"):
            rows, rt, tsps, total = [], None, None, None
            for line in open(f, "rb").read().split(b"\n"):
                if not line.strip():
                    continue
                o = json.loads(line)
                gs = o.get("global_step/max_steps")
                if gs:
                    total = gs.split("/")[1]
                if "loss" in o:
                    rows.append((int(gs.split("/")[0]) if gs else None, repr(o["loss"])))
                if "train_runtime" in o:
                    rt, tsps = repr(o["train_runtime"]), repr(o["train_steps_per_second"])
            out_row(f, rows, rt, tsps, total, "global_step/max_steps" if total else "-",
                    "global_step/max_steps")
        elif f.endswith(".json"):
            s = json.load(open(f))
            lh = s["log_history"]
            rows = [(r["step"], repr(r["loss"])) for r in lh if "loss" in r]
            fin = [r for r in lh if "train_runtime" in r]
            out_row(f, rows, repr(fin[-1]["train_runtime"]) if fin else None,
                    repr(fin[-1]["train_steps_per_second"]) if fin else None,
                    "%s/%s" % (s.get("global_step"), s.get("max_steps")),
                    "global_step/max_steps keys", 'trainer_state "step"')
    print("# layout counts per stdout file (how each {'loss': ...} dict sits on its physical line):")
    for f, c in layout:
        print("#   %s: %s" % (f, ", ".join("%s=%d" % kv for kv in c.items())))
    for f in sorted(glob.glob("*.jsonl")):
        jsonl_time(f)


def jsonl_time(path):
    """ms-swift's logging.jsonl: the time of each loss line and the model size.

    ms-swift's trainer mixin writes 'train_speed(iter/s)' = round(global_step /
    (time.time() - start_time), 6), so global_step / train_speed is the
    session's seconds at that line (elapsed_time is the same clock in whole
    seconds).  Evaluation lines between two loss lines add their
    'eval_runtime' to that clock.  step_s: the mean over the steps after the
    first row and the 2 default warm-up steps (the rows whose previous row's
    step is >= first step + 2), evaluations taken out."""
    rows, ev, params = [], 0.0, "-"
    for line in open(path, "rb").read().split(b"\n"):
        if not line.strip():
            continue
        o = json.loads(line)
        m = re.search(r": ([0-9.]+)M Params", o.get("model_parameter_info", ""))
        if m:
            params = "%.0f" % (float(m.group(1)) * 1e6)
        if "eval_runtime" in o:
            ev += o["eval_runtime"]
        if "loss" in o:
            step = int(o["global_step/max_steps"].split("/")[0])
            rows.append((step, step / o["train_speed(iter/s)"], ev))
            ev = 0.0
    first = rows[0][0]
    k = next(i for i in range(1, len(rows)) if rows[i - 1][0] >= first + 2) - 1
    spent = rows[-1][1] - rows[k][1] - sum(r[2] for r in rows[k + 1:])
    print("# %s: params %s (model_parameter_info); step_s %.4f = (%.2f s at step %d"
          " - %.2f s at step %d - %.2f s of eval_runtime between) / %d steps" %
          (path, params, spent / (rows[-1][0] - rows[k][0]), rows[-1][1], rows[-1][0],
           rows[k][1], rows[k][0], sum(r[2] for r in rows[k + 1:]),
           rows[-1][0] - rows[k][0]))


if __name__ == "__main__":
    sys.exit(main())
