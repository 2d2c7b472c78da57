#!/usr/bin/env python3
"""`strata stacks` against `gdb -batch -ex 'thread apply all bt' -p PID`, on one CPython process
(8 threads, each 100 Python frames deep), in the same run; also `strata stacks` of the same
process stopped with SIGSTOP. Prints a Markdown table of wall times (median, min, max).

    bench/stacks/side_by_side.py [--python PATH] [--strata PATH] [--runs N] [--gdb-runs N]
"""
import argparse
import glob
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deep_threads.py")


def default_python():
    for p in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12"))) + [shutil.which("python3.12") or ""]:
        if p and os.access(p, os.X_OK):
            return p
    sys.exit("no python3.12 found: pass --python")


def timed(cmd, runs):
    times = []
    out = ""
    for _ in range(runs):
        start = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times.append((time.perf_counter() - start) * 1000)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        out = r.stdout
    return times, out


def row(name, times, note):
    return (f"| {name} | {statistics.median(times):.1f} | {min(times):.1f} | {max(times):.1f} | {len(times)} | {note} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=None)
    ap.add_argument("--strata", default=os.path.join(REPO, "build/release/adapter/cli/strata"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--gdb-runs", type=int, default=5)
    args = ap.parse_args()
    python = args.python or default_python()
    if not os.access(args.strata, os.X_OK):
        sys.exit(f"{args.strata} is not built: cmake --preset release && cmake --build --preset release --target strata -j2")
    gdb = shutil.which("gdb")

    target = subprocess.Popen([python, TARGET, "8", "100"], stdout=subprocess.PIPE, text=True)
    try:
        if target.stdout.readline().strip() != "ready":
            sys.exit("the target did not start")
        pid = target.pid
        version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True).stdout.strip()
        print(f"target: CPython {version} ({python}), pid {pid}, 8 threads x 100 Python frames + the main thread")
        print(f"strata: {args.strata}; gdb: {gdb or 'not installed'}; {os.cpu_count()} CPUs\n")
        rows = []
        # Warm the page cache for both tools before timing.
        timed([args.strata, "stacks", str(pid)], 1)
        times, out = timed([args.strata, "stacks", str(pid)], args.runs)
        frames = out.count("[py] ")
        rows.append(row("`strata stacks PID` (Python + native, merged)", times, f"{frames} Python frames printed"))
        times, _ = timed([args.strata, "stacks", "--python-only", str(pid)], args.runs)
        rows.append(row("`strata stacks --python-only PID`", times, ""))
        times, _ = timed([args.strata, "stacks", "--native", str(pid)], args.runs)
        rows.append(row("`strata stacks --native PID`", times, "no Python frames"))
        os.kill(pid, signal.SIGSTOP)
        try:
            times, _ = timed([args.strata, "stacks", str(pid)], args.runs)
            rows.append(row("`strata stacks PID`, target stopped with SIGSTOP", times, "left stopped"))
        finally:
            os.kill(pid, signal.SIGCONT)
        if gdb:
            cmd = [gdb, "-nx", "-batch", "-ex", "thread apply all bt", "-p", str(pid)]
            timed(cmd, 1)
            times, out = timed(cmd, args.gdb_runs)
            rows.append(row("`gdb -batch -ex 'thread apply all bt' -p PID`", times,
                            f"{out.count(chr(10) + '#')} native frames printed, no Python frames"))
        print("| command | median ms | min ms | max ms | runs | note |")
        print("| --- | --- | --- | --- | --- | --- |")
        print("\n".join(rows))
    finally:
        target.kill()
        target.wait()


if __name__ == "__main__":
    main()
