#!/usr/bin/env python3
"""torch_matmul.py - PyTorch's matrix multiply on the same GPU, types and
shapes as `shakedown gemm --backend nccl`, timed the way shakedown times
them: per product, WARMUP untimed calls then ITERS calls each between two
CUDA events, the median call; TFLOPs = 2 m n k / time.  The peer of the GPU
kit's gemm step (test/gpu/check.sh): shakedown's best TFLOPs per type over
this sweep, divided by PyTorch's, is the ratio it reports.

Types: tf32 (float32 with torch.backends.cuda.matmul.allow_tf32), bf16 and
fp16 (torch.matmul, output in the input type), fp8 (torch._scaled_mm,
float8_e4m3fn inputs with unit scales, bf16 output: what cuBLASLt's fp8
path computes; needs compute capability 8.9).  Shapes, as shakedown gemm
names them: square n x n x n for every --sizes, and the three matrix
multiplies of a GPT-2 block of width C over T tokens (m x n x k): qkv
T x 3C x C, fc T x 4C x C, proj T x C x 4C.

Prints one line per product, "product TYPE SHAPE m n k median_us tflops",
then one "best TYPE tflops SHAPE" line per type.  Exit 0, or 2 when torch
has no CUDA device here.
"""
import argparse
import statistics
import sys


def parse_sizes(text):
    if text == "none":
        return []
    if "-" in text:
        lo, hi = (int(x) for x in text.split("-"))
        out = []
        n = lo
        while n <= hi:
            out.append(n)
            n *= 2
        return out
    return [int(x) for x in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="512-16384")
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--dtype", default="tf32,bf16,fp16,fp8")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("torch_matmul: torch sees no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    cc = torch.cuda.get_device_capability()
    print(f"# torch {torch.__version__} CUDA {torch.version.cuda} on "
          f"{torch.cuda.get_device_name()} (cc {cc[0]}.{cc[1]})")
    shapes = [("square", n, n, n) for n in parse_sizes(args.sizes)]
    c, t = args.width, args.tokens
    if c:
        shapes += [("qkv", t, 3 * c, c), ("fc", t, 4 * c, c),
                   ("proj", t, c, 4 * c)]
    best = {}
    for ty in args.dtype.split(","):
        if ty == "fp8" and cc < (8, 9):
            print(f"# fp8 needs compute capability 8.9: left out")
            continue
        torch.backends.cuda.matmul.allow_tf32 = ty == "tf32"
        for name, m, n, k in shapes:
            if ty in ("tf32", "fp32"):
                a = torch.randn(m, k, device=dev, dtype=torch.float32)
                b = torch.randn(k, n, device=dev, dtype=torch.float32)
                call = lambda: torch.matmul(a, b)
            elif ty in ("bf16", "fp16"):
                dt = torch.bfloat16 if ty == "bf16" else torch.float16
                a = torch.randn(m, k, device=dev, dtype=dt)
                b = torch.randn(k, n, device=dev, dtype=dt)
                call = lambda: torch.matmul(a, b)
            elif ty == "fp8":
                a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
                # _scaled_mm wants the second operand column-major
                b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
                one = torch.ones((), device=dev, dtype=torch.float32)
                call = lambda: torch._scaled_mm(a, b, scale_a=one,
                                                scale_b=one,
                                                out_dtype=torch.bfloat16)
            else:
                print(f"torch_matmul: unknown type {ty}", file=sys.stderr)
                return 2
            for _ in range(args.warmup):
                call()
            times = []
            for _ in range(args.iters):
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record()
                call()
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e) * 1e3)  # us
            med = statistics.median(times)
            tf = 2.0 * m * n * k / (med * 1e-6) / 1e12
            print(f"product {ty} {name} {m} {n} {k} {med:.2f} {tf:.2f}",
                  flush=True)
            if tf > best.get(ty, (0.0, ""))[0]:
                best[ty] = (tf, f"{name}:{m}x{n}x{k}")
            del a, b
            torch.cuda.empty_cache()
    for ty, (tf, shape) in best.items():
        print(f"best {ty} {tf:.2f} {shape}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
