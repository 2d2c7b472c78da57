#!/usr/bin/env python3
"""What the collector's `stacks` mode adds to a kernel launch on the CPU, before CUPTI's own work,
measured without a GPU: the launch-key path of the collector (libstrata_launch_keys.so, built from
the collector's own sources) called the way a launch callback calls it, from a Python line 30
frames deep with the GIL released (as PyTorch's ops release it), in each CPython given. Side by
side with what the collector did before for such a launch: unwind the whole native stack.

    python3 bench/gpu/launch_keys.py [--build build/release] [--pythons PY,...] [--calls 200000] [--rounds 5]

Prints min / median ns per launch of each way, per interpreter.
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

CHILD = r'''
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])  # CDLL releases the GIL around each call, as torch's ops do
lib.strata_bench_keys.restype = ctypes.c_double
calls, rounds = int(sys.argv[2]), int(sys.argv[3])
def deep(n, mode):
    return deep(n - 1, mode) if n else lib.strata_bench_keys(mode, calls)
out = {}
for mode in (0, 1, 2, 3):
    out[mode] = [deep(30, mode) for _ in range(rounds)]
out["frames"] = lib.strata_bench_frames_read()
print(json.dumps(out))
'''

WAYS = [(3, "the whole native stack unwound (the collector before)"),
        (0, "own Python frames, no unwinding (now)"),
        (2, "a thread with no Python frame, tied to the waiting thread (now)"),
        (1, "no Python at all: a bounded native unwind (now)")]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--pythons", default="")
    p.add_argument("--calls", type=int, default=200000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    lib = os.path.join(args.build, "bench", "gpu", "libstrata_launch_keys.so")
    if not os.path.exists(lib):
        sys.exit(f"launch_keys: {lib} is missing: cmake --build --preset release --target strata_launch_keys")
    pythons = [x for x in args.pythons.split(",") if x] or sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[0-9]*/bin/python3.1[0-9]"))) + ["/usr/bin/python3.11"]
    print(f"{args.calls} launches a round, {args.rounds} rounds, 30 Python frames deep; load average "
          f"{os.getloadavg()[0]:.2f}; ns per launch, min / median\n")
    print("| CPython | " + " | ".join(w for _, w in WAYS) + " |")
    print("| --- | " + " | ".join("---:" for _ in WAYS) + " |")
    for py in pythons:
        done = subprocess.run([py, "-c", CHILD, lib, str(args.calls), str(args.rounds)], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"| {py} | failed: {done.stderr.strip()[-200:]} |")
            continue
        import json
        r = json.loads(done.stdout)
        version = subprocess.run([py, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                                 text=True).stdout.strip()
        cells = [f"{min(r[str(m)]):.0f} / {statistics.median(r[str(m)]):.0f}" for m, _ in WAYS]
        print(f"| {version} ({py}) | " + " | ".join(cells) + " |")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
