#!/usr/bin/env python3
"""gen_megatron_deepspeed.py - write the Megatron-LM and DeepSpeed fixtures
of test/data/ingest/ (megatron*.log, deepspeed*.log) the way those
frameworks print, with round known answers (README-megatron-deepspeed).
Run it from this folder: python3 gen_megatron_deepspeed.py.  Synthetic
data, written to the formats' definitions (the format strings are quoted
in lib/ingest/megatron.c and lib/ingest/deepspeed.c):
 - Megatron-LM megatron/training/training.py training_log() (commit
   d98e8a64: a date stamp before each line, a loss printed when >= 0) and
   megatron/training/arguments.py _print_args();
 - DeepSpeed (commit 38327e07) deepspeed/runtime/pipe/engine.py PipelineEngine.train_batch(),
   deepspeed/utils/timer.py ThroughputTimer, deepspeed/runtime/config.py
   DeepSpeedConfig.print(), deepspeed/profiling/flops_profiler/profiler.py.
The run behind them is the HF/LLaMA-Factory fixtures' one: 8 GPUs, 24
sequences of 2048 tokens a step (49152 tokens), 3.0 s a step.
"""
N = 100


def loss(step):  # 3.00 at step 1, down 0.01 a step
    return 3.0 - 0.01 * (step - 1)


def args_block(log_interval, train_iters):
    rows = [("global_batch_size", 24), ("hidden_size", 4096),
            ("log_interval", log_interval), ("micro_batch_size", 3),
            ("num_layers", 32), ("seq_length", 2048),
            ("train_iters", train_iters), ("world_size", 8)]
    out = ["------------------------ arguments ------------------------"]
    for k, v in rows:
        out.append("  %s %s %s" % (k, "." * (48 - len(k)), v))
    out.append("-------------------- end of arguments ---------------------")
    return out


def iteration(i, iters, ms, lm, nan_iters=0, prefix=" "):
    s = prefix + "[2026-01-02 03:%02d:%02d.%06d]" % (i // 20, (3 * i) % 60,
                                                    1000 * i)
    s += " iteration %8d/%8d |" % (i, iters)
    s += " consumed samples: %12d |" % (24 * i)
    s += " elapsed time per iteration (ms): %.1f |" % ms
    s += " throughput per GPU (TFLOP/s/GPU): %.1f |" % 105.3
    s += " learning rate: %.6E |" % 1e-5
    s += " global batch size: %5d |" % 24
    if lm is not None:
        s += " lm loss: %.6E |" % lm
    s += " loss scale: %.1f |" % 1.0
    s += " grad norm: %.3f |" % 1.25
    s += " number of skipped iterations: %3d |" % 0
    s += " number of nan iterations: %3d |" % nan_iters
    return s


def head():
    return ["using world size: 8, data-parallel size: 8, context-parallel "
            "size: 1, tensor-model-parallel size: 1, pipeline-model-parallel "
            "size: 1"] + args_block(1, 105) + [
            "> building GPT model ...",
            "UserWarning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now",
            "[after model, optimizer, and learning rate scheduler are built] "
            "datetime: 2026-01-02 03:04:05"]


def write(name, lines, end="\n"):
    with open(name, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + end)


# megatron.log: 105 iterations, log interval 1, two garbled lines
lines = head()
for i in range(1, 106):
    s = iteration(i, 105, 3000.0, loss(i))
    if i % 25 == 0:
        s = "[rank7]:" + s                      # torchrun --tee prefix
    if i == 30:
        s = s.replace("lm loss: 2.710000E+00", "lm loss: 2.71OOOOE+00")
    if i == 60:
        s = s.replace("iteration       60/", "iteration       ??/")
    lines.append(s)
    if i == 1:
        lines.append("[Rank 7] (after 1 iterations) memory (MB) | allocated: "
                     "1234.5 | max allocated: 5678.9 | reserved: 6000.0 | "
                     "max reserved: 6000.0")
lines.append(" validation loss at iteration 100 | lm loss value: 2.010000E+00 "
             "| lm loss PPL: 7.463e+00 |")
write("megatron.log", lines)

# megatron_diverge.log: no garbled line; after step 50 the loss climbs
lines = head()
for i in range(1, 106):
    lm = loss(i) if i <= 50 else loss(50) + 0.05 * (i - 50)
    lines.append(iteration(i, 105, 3000.0, lm))
write("megatron_diverge.log", lines)

# megatron_nan.log: iteration 37 is a NaN iteration (its loss left out of
# the average, which is then 0: printed as 0 since avg >= 0)
lines = head()
for i in range(1, 101):
    if i == 37:
        lines.append(iteration(i, 100, 3000.0, 0.0, nan_iters=1))
    else:
        lines.append(iteration(i, 100, 3000.0, loss(i)))
write("megatron_nan.log", lines)

# megatron_truncated.log: cut inside the line of iteration 50
lines = head()
for i in range(1, 51):
    lines.append(iteration(i, 100, 3000.0, loss(i)))
text = "\n".join(lines)
cut = text.rindex(" learning rate:")
with open("megatron_truncated.log", "w", encoding="utf-8") as f:
    f.write(text[:cut])

# megatron_every10.log: log interval 10, 100 iterations; the first row
# has 6 s of start-up in its interval mean (3.6 s)
lines = ["using world size: 8, data-parallel size: 8"] + args_block(10, 100)
for k in range(1, 11):
    i = 10 * k
    lines.append(iteration(i, 100, 3600.0 if k == 1 else 3000.0,
                           3.0 - 0.1 * (k - 1)))
write("megatron_every10.log", lines)


# deepspeed.log: the pipeline engine, steps_per_print 1
def ds_config(steps_per_print):
    rows = [("gradient_accumulation_steps", 1), ("steps_per_print",
            steps_per_print), ("train_batch_size", 24),
            ("train_micro_batch_size_per_gpu", 3), ("wall_clock_breakdown",
            "False")]
    out = ["[2026-01-02 03:04:05,100] [INFO] [config.py:1000:print] "
           "DeepSpeedEngine configuration:"]
    for k, v in rows:
        out.append("[2026-01-02 03:04:05,101] [INFO] [config.py:1004:print]"
                   "   %s %s %s" % (k, "." * (29 - len(k)), v))
    return out


PROFILE = """-------------------------- DeepSpeed Flops Profiler --------------------------
Profile Summary at step 10:
Notations:
data parallel size (dp_size), model parallel size(mp_size),
number of parameters (params), number of multiply-accumulate operations(MACs),
number of floating-point operations (flops), floating-point operations per second (FLOPS),
fwd latency (forward propagation latency), bwd latency (backward propagation latency),
step (weights update latency), iter latency (sum of fwd, bwd and step latency)

world size:                                                             8
data parallel size:                                                     8
model parallel size:                                                    1
batch size per GPU:                                                     3
params per GPU:                                                         124.44 M
params of model = params per GPU * mp_size:                             124.44 M
fwd MACs per GPU:                                                       1.15 TMACs
fwd flops per GPU:                                                      2.3 T
fwd flops of model = fwd flops per GPU * mp_size:                       2.3 T
fwd latency:                                                            1 s
fwd FLOPS per GPU = fwd flops per GPU / fwd latency:                    2.3 TFLOPS
bwd latency:                                                            2 s
bwd FLOPS per GPU = 2 * fwd flops per GPU / bwd latency:                2.3 TFLOPS
fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency):      2.3 TFLOPS
step latency:                                                           1 ms
iter latency:                                                           3 s
FLOPS per GPU = 3 * fwd flops per GPU / iter latency:                   2.3 TFLOPS
samples/second:                                                         8
------------------------------------------------------------------------------""".split("\n")

lines = ["[2026-01-02 03:04:00,000] [INFO] [real_accelerator.py:203:get_accelerator] "
         "Setting ds_accelerator to cuda (auto detect)"] + ds_config(1)
for i in range(1, N + 1):
    lines.append("[2026-01-02 03:04:%02d,000] [INFO] [logging.py:128:log_dist] "
                 "[Rank 0] step=%d, skipped=0, lr=[1e-05], mom=[(0.9, 0.999)]"
                 % (i % 60, i))
    lines.append("[2026-01-02 03:04:%02d,001] [INFO] [timer.py:264:stop] "
                 "epoch=0/micro_step=%d/global_step=%d, "
                 "RunningAvgSamplesPerSec=8.0, CurrSamplesPerSec=8.0, "
                 "MemAllocated=1.5GB, MaxMemAllocated=3.2GB" % (i % 60, i, i))
    lines.append("steps: %d loss: %.4f iter time (s): 3.000 samples/sec: 8.000"
                 % (i, loss(i)))
    if i == 10:
        lines += PROFILE
write("deepspeed.log", lines)

# deepspeed_every10.log: DeepSpeedEngine without the pipeline, every 10
# steps: no loss lines, rows from the ThroughputTimer
lines = ds_config(10)
for k in range(1, 11):
    i = 10 * k
    lines.append("[Rank 0] step=%d, skipped=0, lr=[1e-05], mom=[(0.9, 0.999)]"
                 % i)
    lines.append("epoch=0/micro_step=%d/global_step=%d, "
                 "RunningAvgSamplesPerSec=8.0, CurrSamplesPerSec=8.0, "
                 "MemAllocated=1.5GB, MaxMemAllocated=3.2GB" % (i, i))
write("deepspeed_every10.log", lines)
