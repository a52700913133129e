#!/usr/bin/env python3
# torch_gloo.py - PyTorch's gloo backend timed with the DeepSpeed
# communication benchmark's method: bench/cpu_bench.sh's PyTorch peer.
#
# Forks N ranks (torch.multiprocessing, TCP rendezvous on 127.0.0.1) that
# time each seed op on float32 tensors of nccl-tests' sizes (the buffers
# shakedown uses at the same size, from the counts of shakedown/coll.h) as
# deepspeedai/DeepSpeedExamples benchmarks/communication does it on a
# host without CUDA events (its timed_<op> before the events came in,
# e.g. all_reduce.py): sync_all (a barrier), warm-ups, sync_all, a
# perf_counter around the timed trials and a closing sync_all, duration /
# trials, on rank 0 (print_rank_0).  Its get_bw (utils.py, reduce_scatter
# from EleutherAI/cookbook's fork) gives the throughput and busbw in Gbps;
# at these buffers busbw / 8 is nccl-tests' busbw in GB/s.
#
# The calls are DeepSpeed's: all_reduce and broadcast (root 0) in place,
# all_gather_into_tensor (falling back, as DeepSpeed does without it, to
# all_gather into a list of chunks of the output), reduce_scatter_tensor
# (then _reduce_scatter_base, then reduce_scatter of a list of chunks),
# all_to_all_single, and send/recv from rank 0 to rank 1 (pt2pt; the other
# ranks only join the barriers).  An op the gloo backend does not have is
# skipped with a note.  Rank 0 prints one line per (op, size):
#
#   op=all_reduce peer=torch api=all_reduce ranks=2 size_bytes=1024
#   ds_size_bytes=1024 iters=100 warmup=10 time_us=95.1
#   ds_tput_gbps=0.172 ds_busbw_gbps=0.086 busbw_gbs=0.0108
#
# usage: torch_gloo.py -n RANKS [--ops OP,...] SIZE[:TRIALS[:WARMUPS]]...
# Exit status 77 (with a note on stderr) when torch cannot be imported.
import argparse
import datetime
import os
import socket
import sys
import time

SEED_OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
            "broadcast", "pt2pt")


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if s and s[-1].upper() in mult:
        return int(float(s[:-1]) * mult[s[-1].upper()])
    return int(s)


def parse_point(s, trials, warmups):
    parts = s.split(":")
    size = parse_size(parts[0])
    if len(parts) > 1:
        trials = int(parts[1])
    if len(parts) > 2:
        warmups = int(parts[2])
    return size, trials, warmups


def counts(op, size_bytes, n, elt=4):
    """Per-rank send and receive element counts: sd_coll_counts."""
    count = size_bytes // elt
    align = 16 // elt
    block = count // n // align * align
    if op == "all_gather":
        return block, block * n
    if op == "reduce_scatter":
        return block * n, block
    if op == "all_to_all":
        return block * n, block * n
    return count, count


def get_bw(op, size, duration, n):
    """DeepSpeed's utils.get_bw in Gbps (size: the input's bytes)."""
    if duration == 0:
        return 0.0, 0.0
    if op == "all_to_all":
        tput = size / duration
        busbw = size / duration * ((n - 1) / n)
    elif op == "all_gather":
        size *= n
        tput = size / duration
        busbw = size / duration * ((n - 1) / n)
    elif op == "all_reduce":
        tput = size * 2 / duration
        busbw = size / duration * (2 * (n - 1) / n)
    elif op == "reduce_scatter":
        tput = size / duration
        busbw = size / duration * ((n - 1) / n)
    else:  # pt2pt, broadcast
        tput = size / duration
        busbw = tput
    return tput * 8 / 1e9, busbw * 8 / 1e9


def unsupported(e):
    m = str(e)
    return "not support" in m or "no support" in m


def make_call(torch, dist, op, size_bytes, n, me):
    """(api name, a function running one op, input tensor) or
    (None, reason, None) when the gloo backend lacks the op."""
    sc, rc = counts(op, size_bytes, n)
    inp = torch.ones(sc, dtype=torch.float32).mul_(float(me))
    if op == "all_reduce":
        return "all_reduce", lambda: dist.all_reduce(inp), inp
    if op == "broadcast":
        return "broadcast", lambda: dist.broadcast(inp, 0), inp
    if op == "pt2pt":
        if me == 0:
            return "send_recv", lambda: dist.send(inp, 1), inp
        if me == 1:
            return "send_recv", lambda: dist.recv(inp, src=0), inp
        return "send_recv", lambda: None, inp
    out = torch.zeros(rc, dtype=torch.float32)
    if op == "all_to_all":
        return ("all_to_all_single",
                lambda: dist.all_to_all_single(out, inp), inp)
    if op == "all_gather":
        chunks = list(torch.chunk(out, n))
        tries = [("all_gather_into_tensor",
                  lambda: dist.all_gather_into_tensor(out, inp)),
                 ("all_gather_list", lambda: dist.all_gather(chunks, inp))]
    else:  # reduce_scatter
        chunks = list(torch.chunk(inp, n))
        tries = [("reduce_scatter_tensor",
                  lambda: dist.reduce_scatter_tensor(out, inp)),
                 ("_reduce_scatter_base",
                  lambda: dist._reduce_scatter_base(out, inp)),
                 ("reduce_scatter_list",
                  lambda: dist.reduce_scatter(out, chunks))]
    last = None
    for name, fn in tries:
        if not hasattr(dist, name.replace("_list", "")):
            continue
        try:
            fn()  # the backend refuses at once, on every rank alike
            return name, fn, inp
        except RuntimeError as e:
            if not unsupported(e):
                raise
            last = str(e).strip().splitlines()[0]
    return None, last or "no API for it", None


def rank_main(me, args, port):
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import torch.distributed as dist
    n = args.ranks
    dist.init_process_group(
        "gloo", init_method="tcp://127.0.0.1:%d" % port, rank=me,
        world_size=n, timeout=datetime.timedelta(seconds=args.timeout))

    def sync_all():  # DeepSpeed's, less the accelerator's synchronize
        dist.barrier()

    skipped = set()
    for size_bytes, trials, warmups in args.points:
        for op in args.ops:
            if op in skipped or (op == "pt2pt" and n < 2):
                continue
            api, fn, inp = make_call(torch, dist, op, size_bytes, n, me)
            if api is None:
                skipped.add(op)
                if me == 0:
                    print("# torch %s gloo: %s skipped: %s" %
                          (torch.__version__, op, fn), flush=True)
                continue
            sync_all()
            for _ in range(warmups):
                fn()
            sync_all()
            pre = time.perf_counter()
            for _ in range(trials):
                fn()
            sync_all()
            duration = time.perf_counter() - pre
            avg = duration / trials
            size = inp.element_size() * inp.nelement()
            tput, busbw = get_bw(op, size, avg, n)
            if me == 0:
                print("op=%s peer=torch api=%s ranks=%d size_bytes=%d "
                      "ds_size_bytes=%d iters=%d warmup=%d time_us=%.3f "
                      "ds_tput_gbps=%.4f ds_busbw_gbps=%.4f "
                      "busbw_gbs=%.5f" %
                      (op, api, n, size_bytes, size, trials, warmups,
                       avg * 1e6, tput, busbw, busbw / 8), flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(
        description="PyTorch gloo timed with DeepSpeed's method")
    p.add_argument("-n", "--ranks", type=int, default=2)
    p.add_argument("--ops", default=",".join(SEED_OPS))
    p.add_argument("--trials", type=int, default=50,
                   help="timed iterations where a point gives none "
                   "(DeepSpeed's default)")
    p.add_argument("--warmups", type=int, default=5)
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("points", nargs="+", metavar="SIZE[:TRIALS[:WARMUPS]]")
    args = p.parse_args()
    args.ops = [o for o in args.ops.split(",") if o]
    for o in args.ops:
        if o not in SEED_OPS:
            p.error("unknown op '%s'; one of %s" % (o, ", ".join(SEED_OPS)))
    args.points = [parse_point(s, args.trials, args.warmups)
                   for s in args.points]
    try:
        import torch.multiprocessing as mp
    except ImportError as e:
        print("# torch gloo skipped: cannot import torch (%s); install "
              "python3-torch for %s" % (e, sys.executable), file=sys.stderr)
        return 77
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # fork: the ranks start without importing torch again
    ctx = mp.start_processes(rank_main, args=(args, port),
                             nprocs=args.ranks, join=False,
                             start_method="fork")
    try:
        while not ctx.join():
            pass
    except Exception as e:
        print("torch_gloo: %s" % e, file=sys.stderr)
        return 3
    try:
        sys.stdout.flush()
    except OSError as e:
        print("torch_gloo: cannot write the results: %s" % e,
              file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
