#!/usr/bin/env python3
"""What GPU collection costs a launch-bound program: examples/cuda/launch_loop (N launches of
an empty kernel, timed by the program itself) run plain and under `strata gpu run` with the
collector in mode off, trace and stacks, interleaved round by round in one run. Prints min /
median ns per launch and each mode's median against plain's. Targets (issue 9): trace within
3 %, stacks within 10 % of plain.

    python3 bench/gpu/collection_overhead.py [--build build/release] [--launches 200000] [--rounds 5]
    python3 bench/gpu/collection_overhead.py --strata BUNDLE/bin/strata --loop BUNDLE/examples/launch_loop

Without a GPU it says "no GPU: ..." and why, prints no numbers and exits 3.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MODES = ("plain", "off", "trace", "stacks")


def no_gpu(why):
    print(f"no GPU: {why}; no overhead numbers were measured", flush=True)
    sys.exit(3)


def run(cmd, timeout=600):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    m = re.search(r"([0-9.]+) ns per launch", done.stdout)
    return (float(m.group(1)) if m else None), done


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--strata", help="the strata CLI (default: BUILD/adapter/cli/strata)")
    p.add_argument("--loop", help="launch_loop (default: BUILD/examples/cuda/launch_loop)")
    p.add_argument("--launches", type=int, default=200000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    strata = args.strata or os.path.join(args.build, "adapter", "cli", "strata")
    loop = args.loop or os.path.join(args.build, "examples", "cuda", "launch_loop")
    for path in (strata, loop):
        if not os.access(path, os.X_OK):
            sys.exit(f"collection_overhead: {path} is missing: build the release preset first "
                     "(cmake --build --preset release --target strata example_cuda_launch_loop strata_cupti)")
    if not (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/dxg")):
        no_gpu("this machine has no NVIDIA driver loaded (/proc/driver/nvidia/version does not exist)")
    ns, done = run([loop, "1000"], timeout=120)
    if ns is None:
        no_gpu(f"launch_loop could not launch a kernel (exit {done.returncode}): "
               f"{(done.stdout + done.stderr).strip()[-500:]}")

    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip() if shutil.which("nvidia-smi") else "?"
    print(f"launch_loop {args.launches} empty kernels, {args.rounds} rounds, modes interleaved; GPU: {gpu}; "
          f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    samples = {m: [] for m in MODES}
    failures = []
    with tempfile.TemporaryDirectory(prefix="strata-gpu-overhead-") as work:
        for r in range(args.rounds):
            for mode in MODES:
                program = [loop, str(args.launches)]
                if mode == "plain":
                    cmd = program
                else:
                    cmd = [strata, "gpu", "run", "--" + mode, "--store", os.path.join(work, f"{mode}-{r}.strata"),
                           "--", *program]
                ns, done = run(cmd)
                if ns is None:
                    failures.append(f"{mode} round {r}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
                else:
                    samples[mode].append(ns)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    base = statistics.median(samples["plain"]) if samples["plain"] else None
    print()
    print("| mode | ns per launch, min / median | median vs plain |")
    print("| --- | ---: | ---: |")
    for mode in MODES:
        s = samples[mode]
        if not s:
            print(f"| {mode} | (no run succeeded) | |")
            continue
        med = statistics.median(s)
        ratio = f"{(med / base - 1) * 100:+.1f} %" if base and mode != "plain" else "—"
        print(f"| {mode} | {min(s):.1f} / {med:.1f} | {ratio} |")
    for f in failures:
        print("failed:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
