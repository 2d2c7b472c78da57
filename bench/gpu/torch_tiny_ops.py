#!/usr/bin/env python3
"""A launch-bound PyTorch eager loop for the overhead bench: N in-place adds of a small CUDA tensor
(x.add_(1), one kernel launch each), after a warm-up, timed between two torch.cuda.synchronize().

    python3 bench/gpu/torch_tiny_ops.py [N] [--elements 256] [--warmup 1000] [--profiler]

Prints "torch_tiny_ops: N launches (+W warm-up) in T ms: X ns per launch (torch V, CUDA C, DEVICE)"
(the pattern examples/cuda/launch_loop prints, so one regex reads both). With --profiler the timed loop runs inside
torch.profiler.profile(activities=[CPU, CUDA]); the trace is not exported, and what is timed is
the loop inside the context (entering it, which starts Kineto's CUPTI tracing, and leaving it,
which collects the events, are outside the two synchronize() calls). Without CUDA in torch it
says why and exits 3.
"""
import argparse
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("launches", type=int, nargs="?", default=20000)
    p.add_argument("--elements", type=int, default=256, help="elements of the tensor (1 or 256 keeps it tiny)")
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--profiler", action="store_true", help="time the loop inside torch.profiler.profile")
    args = p.parse_args()
    if args.launches < 1 or args.elements < 1 or args.warmup < 0:
        p.error("launches and elements must be at least 1, warmup at least 0")
    try:
        import torch
    except ImportError as e:
        print(f"torch_tiny_ops: no CUDA: torch cannot be imported by {sys.executable} ({e})", flush=True)
        return 3
    if not torch.cuda.is_available():
        built = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "a build without CUDA"
        print(f"torch_tiny_ops: no CUDA: torch {torch.__version__} ({built}) sees no CUDA device "
              "(torch.cuda.is_available() is False)", flush=True)
        return 3

    x = torch.zeros(args.elements, device="cuda")
    for _ in range(args.warmup):
        x.add_(1)
    torch.cuda.synchronize()

    def timed():
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(args.launches):
            x.add_(1)
        torch.cuda.synchronize()
        return time.perf_counter_ns() - t0

    if args.profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            ns = timed()
    else:
        ns = timed()
    # The adds must have run: a wrong count means launches were lost, not sped up (checked
    # where float32 still counts exactly).
    expected = float(args.warmup + args.launches)
    got = x[0].item()
    if expected < 2 ** 24 and got != expected:
        print(f"torch_tiny_ops: the tensor holds {got}, not {expected}: launches were lost", flush=True)
        return 1
    print(f"torch_tiny_ops: {args.launches} launches (+{args.warmup} warm-up) in {ns / 1e6:.3f} ms: "
          f"{ns / args.launches:.1f} ns per launch (torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"{torch.cuda.get_device_name()})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
