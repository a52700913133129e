#!/usr/bin/env python3
"""gen_hf_llamafactory.py - write the Hugging Face Trainer, LLaMA-Factory
and config.json fixtures of test/data/ingest/ (hf_*, llamafactory_*,
config_*) the way the frameworks write them, with round known answers
(README-hf-llamafactory).  Run it from this folder: python3
gen_hf_llamafactory.py.  Synthetic data, written to the formats'
definitions:
 - trainer_state.json: transformers 5.24.0 trainer_callback.py:143-147
   (json.dumps(asdict, indent=2, sort_keys=True) + "\\n"), log entries from
   trainer.py:2238-2273 and 4189-4210, the end entry from trainer.py:2001-2022;
 - Trainer stdout: trainer_callback.py:673-690 (5.x: floats as f"{v:.4g}"
   strings; 4.x printed the floats themselves), tqdm noise around them;
 - trainer_log.jsonl: LLaMA-Factory callbacks.py:206-217, 272-310 (commit
   ff6d4d12), one json.dumps per line.
"""
import json
import math
from datetime import timedelta

TOK = 49152          # global tokens per step: 8 GPUs x 3 sequences x 2048
STEP_S = 3.0         # seconds per step
N = 100


def loss(step):      # 3.0 at step 1 down to 2.01 at step 100
    return round(3.0 - 0.01 * (step - 1), 4)


def state(log_history, logging_steps, tokens, max_steps=N):
    return {
        "best_global_step": None, "best_metric": None,
        "best_model_checkpoint": None, "epoch": 1.0, "eval_steps": 500,
        "global_step": max_steps, "is_hyper_param_search": False,
        "is_local_process_zero": True, "is_world_process_zero": True,
        "log_history": log_history, "logging_steps": logging_steps,
        "max_steps": max_steps, "num_input_tokens_seen": tokens,
        "num_train_epochs": 1, "save_steps": 500,
        "stateful_callbacks": {"TrainerControl": {"args": {
            "should_epoch_stop": False, "should_evaluate": False,
            "should_log": False, "should_save": True,
            "should_training_stop": True}, "attributes": {}}},
        "total_flos": 1.2345e+17, "train_batch_size": 3,
        "trial_name": None, "trial_params": None,
    }


def dump_state(path, st):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(st, indent=2, sort_keys=True) + "\n")


def end_entry(runtime, steps=N):
    return {"epoch": 1.0, "step": steps, "total_flos": 1.2345e+17,
            "train_loss": 2.505, "train_runtime": runtime,
            "train_samples_per_second": round(steps * 24 / runtime, 3),
            "train_steps_per_second": round(steps / runtime, 3)}


# hf_trainer_state.json: logging_steps 1, no token counts, train_runtime 300
hist = [{"epoch": round(s / N, 4), "grad_norm": 1.5, "learning_rate":
         round(5e-05 * (1 - (s - 1) / N), 10), "loss": loss(s), "step": s}
        for s in range(1, N + 1)]
hist.append(end_entry(300.0))
st = state(hist, 1, 0)
dump_state("hf_trainer_state.json", st)

# hf_truncated.json: the same document cut off in the middle of an entry
text = json.dumps(st, indent=2, sort_keys=True) + "\n"
cut = text.index('"step": 42')
with open("hf_truncated.json", "w", encoding="utf-8") as f:
    f.write(text[:cut + 4])

# hf_trainer_state_every10.json: logging_steps 10, include_num_input_tokens_seen
# (num_input_tokens_seen and the session's train_runtime in every entry,
# trainer.py:4203-4207): 6 s of start-up then 3 s a step; an eval at 50
hist = []
for s in range(10, N + 1, 10):
    rt = 6.0 + STEP_S * s
    hist.append({"epoch": s / N, "grad_norm": 1.25, "learning_rate": 4e-05,
                 "loss": round(3.0 - 0.1 * (s // 10 - 1), 4),
                 "num_input_tokens_seen": TOK * s, "step": s,
                 "train_runtime": rt,
                 "train_tokens_per_second": round(TOK * s / rt, 3)})
    if s == 50:
        hist.append({"epoch": 0.5, "eval_loss": 2.55, "eval_runtime": 4.5,
                     "eval_samples_per_second": 10.0,
                     "eval_steps_per_second": 1.25,
                     "num_input_tokens_seen": TOK * s, "step": 50})
end = end_entry(306.0)
end["num_input_tokens_seen"] = TOK * N
hist.append(end)
dump_state("hf_trainer_state_every10.json", state(hist, 10, TOK * N))


# hf_stdout.log: transformers 5.x stdout, logging_steps 10, 100 steps in
# 300 s; tqdm's bar redrawn with \r, warnings, an eval, one garbled dict
def g4(v):
    return f"{v:.4g}"


def bar(s):
    pct = int(100 * s / N)
    left = (N - s) * 3
    return (f"{pct:3d}%|{'#' * (pct // 10):<10}| {s}/{N} "
            f"[{timedelta(seconds=s * 3)}<{timedelta(seconds=left)}, "
            f" 3.00s/it]")


out = ["[WARNING|trainer.py:123] The model is already on multiple devices.",
       "***** Running training *****",
       "  Num examples = 2,400",
       "  Total optimization steps = 100"]
line = ""
for s in range(1, N + 1):
    line += "\r" + bar(s)
    if s % 10 == 0:
        r = s // 10
        d = {"loss": g4(round(3.0 - 0.1 * (r - 1), 4)), "grad_norm": g4(1.25),
             "learning_rate": g4(5e-05 * (1 - (s - 10) / N)),
             "epoch": g4(s / N)}
        txt = str(d)
        if r == 4:                       # a dict cut by another process
            txt = txt[:txt.index("'learning_rate'") + 17]
        out.append(line + "\r" + " " * 60 + "\r" + txt)
        line = ""
        if s == 50:
            out.append("{'eval_loss': '2.55', 'eval_runtime': '4.5', "
                       "'eval_samples_per_second': '10', "
                       "'eval_steps_per_second': '1.25', 'epoch': '0.5'}")
            out.append("/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:"
                       "92: UserWarning: None of the inputs have requires_grad")
out.append("\r" + str({"train_runtime": g4(300.0),
                       "train_samples_per_second": g4(8.0),
                       "train_steps_per_second": g4(0.333),
                       "train_loss": g4(2.55), "epoch": g4(1.0)}))
out.append("")
out.append("Training completed. Do not forget to share your model =)")
with open("hf_stdout.log", "w", encoding="utf-8") as f:
    f.write("\n".join(out) + "\n")

# hf_stdout_v4.log: transformers 4.x stdout (floats printed as they are,
# nan bare), logging_steps 1, five steps, no end-of-training dict
out = ["Some weights of the model were not initialized from the checkpoint"]
for s in range(1, 6):
    lv = float("nan") if s == 3 else 2.5 - 0.25 * (s - 1)
    out.append(str({"loss": lv, "grad_norm": 0.75, "learning_rate": 2e-05,
                    "epoch": round(s / 5, 2)}))
with open("hf_stdout_v4.log", "w", encoding="utf-8") as f:
    f.write("\n".join(out) + "\n")


# LLaMA-Factory trainer_log.jsonl
def lf_line(s, total, elapsed, lv, tokens):
    d = {"current_steps": s, "total_steps": total, "loss": lv,
         "lr": round(5e-05 * (1 - s / total), 10), "epoch": round(s / total, 2),
         "percentage": round(s / total * 100, 2),
         "elapsed_time": str(timedelta(seconds=int(elapsed))),
         "remaining_time": str(timedelta(seconds=int((total - s) * elapsed / s)))}
    if tokens:
        d["throughput"] = round(TOK * s / elapsed, 2)
        d["total_tokens"] = TOK * s
    return json.dumps(d)


def lf_file(path, lines, last_newline=True):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + ("\n" if last_newline else ""))


lf_file("llamafactory_trainer_log.jsonl",
        [lf_line(s, N, STEP_S * s, loss(s), True) for s in range(1, N + 1)])

lines = []
for s in range(10, N + 1, 10):
    lines.append(lf_line(s, N, 5 + STEP_S * s, round(3.0 - 0.1 * (s // 10 - 1), 4),
                         False))
    if s == 50:
        lines.append(json.dumps({"current_steps": 50, "total_steps": N,
                                 "eval_loss": 2.55, "epoch": 0.5,
                                 "percentage": 50.0, "elapsed_time": "0:02:35",
                                 "remaining_time": "0:02:35"}))
lf_file("llamafactory_every10.jsonl", lines)

lf_file("llamafactory_nan.jsonl",
        [lf_line(s, N, STEP_S * s, float("nan") if s == 37 else loss(s), True)
         for s in range(1, N + 1)])

# garbled: a stray print at line 5, step 11 broken (line 12), step 20 cut off
lines = []
for s in range(1, 21):
    t = lf_line(s, 20, STEP_S * s, loss(s), True)
    if s == 11:
        t = t.replace('"loss": ', '"loss": ,', 1)
    if s == 20:
        t = t[:t.index('"lr"')]
    lines.append(t)
    if s == 4:
        lines.append("Saving model checkpoint to saves/llama3-8b/lora/sft")
lf_file("llamafactory_garbled.jsonl", lines, last_newline=False)

# config.json files as published on the Hugging Face Hub (the keys that
# count), parameter counts in README-hf-llamafactory
configs = {
    "config_llama3_8b.json": {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 128000,
        "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
        "initializer_range": 0.02, "intermediate_size": 14336,
        "max_position_embeddings": 8192, "model_type": "llama",
        "num_attention_heads": 32, "num_hidden_layers": 32,
        "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
        "rope_scaling": None, "rope_theta": 500000.0,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": "4.40.0.dev0", "use_cache": True,
        "vocab_size": 128256},
    "config_qwen2_0.5b.json": {
        "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
        "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu",
        "hidden_size": 896, "initializer_range": 0.02,
        "intermediate_size": 4864, "max_position_embeddings": 131072,
        "max_window_layers": 24, "model_type": "qwen2",
        "num_attention_heads": 14, "num_hidden_layers": 24,
        "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0, "sliding_window": 131072,
        "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "transformers_version": "4.40.1", "use_cache": True,
        "use_sliding_window": False, "vocab_size": 151936},
    "config_gpt2.json": {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1,
        "eos_token_id": 50256, "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024,
        "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
        "resid_pdrop": 0.1, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
        "summary_type": "cls_index", "summary_use_proj": True,
        "vocab_size": 50257},
    "config_mixtral.json": {
        "architectures": ["MixtralForCausalLM"], "hidden_size": 4096,
        "intermediate_size": 14336, "model_type": "mixtral",
        "num_attention_heads": 32, "num_experts_per_tok": 2,
        "num_hidden_layers": 32, "num_key_value_heads": 8,
        "num_local_experts": 8, "vocab_size": 32000},
}
for name, cfg in configs.items():
    with open(name, "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2) + "\n")
