#!/usr/bin/python3
"""torch_gpt.py - the training workload's model (lib/train/gpt.h) in PyTorch
eager on the CPU, one thread, timed as bench/train_raw times it, for
bench/train_bench.sh; or with --device cuda on one GPU, in bf16 autocast
(the matmuls in bf16, fp32 master weights and AdamW, as shakedown's GPU
path: plugins/nccl/train_gpu.cu), for the same configuration's tgs
against `shakedown train --backend nccl` (test/gpu/check.sh).

The same model: token and position embeddings; blocks of (LayerNorm, causal
self-attention with biased qkv and output projections, residual, LayerNorm,
GELU (tanh) MLP of 4 x width, residual); a final LayerNorm; an LM head tied
to the token embedding; cross-entropy, the mean over micro_batch x seq_len;
AdamW (decay on 2-D tensors only); parameter names as lib/train's table.
Each step runs ranks x accum_steps micro-batches (the work of `ranks`
data-parallel ranks, as train_raw --ranks does), backward of loss /
(ranks x accum_steps) each, then one optimizer step.

Timing: each step's wall time (time.perf_counter) from zero_grad to the end
of the optimizer step; the first `warmup` steps (at least one) are not
timed; tokens/s = tokens per step x timed steps / their total time (and,
steadier on a loaded host, tokens per step / the median step).

  /usr/bin/python3 bench/torch_gpt.py [--config default|test] [--steps N]
      [--warmup W] [--ranks R] [--seed S] [--lr X] [--layers N] [--width N]
      [--heads N] [--seq-len N] [--vocab N] [--micro-batch N]
      [--accum-steps N] [--tokens FILE] [--init FILE] [--profile]
      [--device cpu|cuda] [--no-bf16]

--tokens reads the inputs and targets train_raw --dump-tokens wrote (int32,
per micro-batch: inputs then targets), so both train on the same data;
without it the tokens are uniform random.  --init loads train_raw
--dump-init's parameters (float32 in table order) instead of PyTorch's own
GPT-2-style initialisation.  --profile adds, untimed, the share of one
step's CPU time spent in matmul operators (torch.autograd.profiler).
--device cuda runs on the first GPU with torch.autocast(bfloat16) around
forward and the loss (--no-bf16: fp32); a step's time then ends after
torch.cuda.synchronize(), and each micro-batch's loss.item() waits for it
as shakedown's GPU path waits for its loss.
"""
import argparse
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {
    # keep in step with SD_GPT_CONFIG_DEFAULT, _TEST and _1B
    "default": dict(layers=4, width=256, heads=4, seq_len=128, vocab=256,
                    micro_batch=4, accum_steps=2),
    "test": dict(layers=2, width=32, heads=2, seq_len=32, vocab=256,
                 micro_batch=2, accum_steps=2),
    # SD_GPT_CONFIG_1B, for one GPU
    "1b": dict(layers=20, width=2048, heads=32, seq_len=2048, vocab=256,
               micro_batch=2, accum_steps=4),
}


class Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)

    def forward(self, x, mask):
        B, T, C = x.shape
        hs = C // self.heads
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.heads, hs).transpose(1, 2)
        k = k.view(B, T, self.heads, hs).transpose(1, 2)
        v = v.view(B, T, self.heads, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(mask[:T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = MLP(width)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab"], c["width"])
        self.wpe = nn.Embedding(c["seq_len"], c["width"])
        self.h = nn.ModuleList(Block(c["width"], c["heads"])
                               for _ in range(c["layers"]))
        self.ln_f = nn.LayerNorm(c["width"])
        T = c["seq_len"]
        self.register_buffer(
            "mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1),
            persistent=False)
        self.register_buffer("pos", torch.arange(T), persistent=False)
        resid_std = 0.02 / math.sqrt(2 * c["layers"])
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = resid_std if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("ln_1.weight") or name.endswith(
                    "ln_2.weight") or name == "ln_f.weight":
                nn.init.ones_(p)
            else:
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(self.pos[: idx.shape[1]])
        for block in self.h:
            x = block(x, self.mask)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]),
                               targets.view(-1))


def table_names(c):
    """lib/train's tensor table, in order (the --init file's layout)."""
    names = ["wte.weight", "wpe.weight"]
    per = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight",
           "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
           "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
           "mlp.c_proj.weight", "mlp.c_proj.bias"]
    for layer in range(c["layers"]):
        names += ["h.%d.%s" % (layer, n) for n in per]
    return names + ["ln_f.weight", "ln_f.bias"]


def load_init(model, c, path):
    flat = np.fromfile(path, dtype=np.float32)
    params = dict(model.named_parameters())
    off = 0
    with torch.no_grad():
        for name in table_names(c):
            p = params[name]
            n = p.numel()
            p.copy_(torch.from_numpy(flat[off:off + n].copy()).view_as(p))
            off += n
    if off != flat.size:
        sys.exit("torch_gpt: %s has %d floats, the model %d"
                 % (path, flat.size, off))


def matmul_share(model, opt, batches, micro):
    from torch.autograd import profiler
    with profiler.profile() as prof:
        opt.zero_grad(set_to_none=True)
        for x, y in batches:
            (model(x, y) / micro).backward()
        opt.step()
    total = mm = 0.0
    for e in prof.key_averages():
        total += e.self_cpu_time_total
        if e.key in ("aten::addmm", "aten::mm", "aten::bmm"):
            mm += e.self_cpu_time_total
    return mm / total if total else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="default", choices=CONFIGS)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--lr", type=float, default=1e-3)
    for f in ("layers", "width", "heads", "seq-len", "vocab", "micro-batch",
              "accum-steps"):
        ap.add_argument("--" + f, type=int)
    ap.add_argument("--tokens")
    ap.add_argument("--init")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--no-bf16", action="store_true")
    a = ap.parse_args()

    dev = torch.device(a.device)
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("torch_gpt: --device cuda, but torch sees no GPU")
    bf16 = cuda and not a.no_bf16
    if not cuda:
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
    torch.manual_seed(a.seed)
    c = dict(CONFIGS[a.config])
    for k in c:
        v = getattr(a, k)
        if v is not None:
            c[k] = v
    B, T, V = c["micro_batch"], c["seq_len"], c["vocab"]
    micro = a.ranks * c["accum_steps"]
    warmup = max(a.warmup, 1)

    model = GPT(c)
    if a.init:
        load_init(model, c, a.init)
    model.to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": other, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)

    tokens = None
    if a.tokens:
        tokens = np.fromfile(a.tokens, dtype=np.int32)
        need = a.steps * micro * 2 * B * T
        if tokens.size < need:
            sys.exit("torch_gpt: %s holds %d tokens, %d steps need %d"
                     % (a.tokens, tokens.size, a.steps, need))
        tokens = torch.from_numpy(tokens[:need].astype(np.int64))

    def batches(step):
        out = []
        for i in range(micro):
            if tokens is None:
                x = torch.randint(0, V, (B, T))
                y = torch.randint(0, V, (B, T))
            else:
                base = (step * micro + i) * 2 * B * T
                x = tokens[base: base + B * T].view(B, T)
                y = tokens[base + B * T: base + 2 * B * T].view(B, T)
            out.append((x.to(dev), y.to(dev)))
        return out

    nparams = sum(p.numel() for p in model.parameters())
    print("# torch_gpt: layers=%d width=%d heads=%d seq_len=%d vocab=%d "
          "micro_batch=%d accum_steps=%d ranks=%d" % (
              c["layers"], c["width"], c["heads"], T, V, B,
              c["accum_steps"], a.ranks))
    print("# torch %s, threads %d, params=%d, init=%s, device %s%s" % (
        torch.__version__, torch.get_num_threads(), nparams,
        a.init or "torch",
        torch.cuda.get_device_name(0) if cuda else "cpu",
        ", bf16 autocast" if bf16 else ""))
    times, timed = [], 0.0
    for s in range(a.steps):
        data = batches(s)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for x, y in data:
            with torch.autocast(a.device, dtype=torch.bfloat16,
                                enabled=bf16):
                loss = model(x, y)
            (loss / micro).backward()
            total += loss.item()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        times.append(dt)
        if s >= warmup:
            timed += dt
        print("step %d loss %.6f time_ms %.3f" % (s + 1, total / micro,
                                                 dt * 1e3))
    n = a.steps - warmup
    if n > 0:
        tps = micro * B * T
        med = sorted(times[warmup:])[n // 2]
        print("timed_steps %d" % n)
        print("step_ms_mean %.3f" % (timed / n * 1e3))
        print("step_ms_median %.3f" % (med * 1e3))
        print("tokens_per_s %.1f" % (tps * n / timed))
        print("tokens_per_s_median_step %.1f" % (tps / med))
    if a.profile:
        print("matmul_share %.3f" % matmul_share(model, opt, batches(0),
                                                 micro))
    print("total_s %.3f" % timed)


if __name__ == "__main__":
    main()
