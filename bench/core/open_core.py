#!/usr/bin/env python3
"""Opening a big core and showing every thread's stack: a CPython process holding about --mb MB
of written memory with 8 threads parked in Python (big_process.py), its core taken by the
kernel (SIGABRT, cores enabled, when core_pattern writes a file here) and by `strata core
--dump`; then, min / median of --rounds rounds each:

  strata core CORE              every thread's merged Python + native stack (text)
  strata core --json CORE       the same as one JSON object
  gdb thread apply all bt       gdb -batch on the same core: native frames only, no Python

and the time `strata core --dump` held the process and wrote the core, beside gcore's.

    python3 bench/core/open_core.py [--strata build/release/adapter/cli/strata] [--mb 1024] [--rounds 3]
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
from bench_dap import loadavg, summary  # noqa: E402

WORKLOAD = os.path.join(HERE, "big_process.py")


def start(python, mb, cwd, cores):
    prefix = ["bash", "-c", 'ulimit -c unlimited && exec "$@"', "bash"] if cores else []
    p = subprocess.Popen(prefix + [python, WORKLOAD, str(mb)], cwd=cwd, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"big_process.py said {line!r}")
    return p


def timed(argv, **kw):
    t = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    took = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()[:400]}")
    return took, r.stdout


def kernel_core_possible():
    try:
        pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    except OSError:
        return False
    return not pattern.startswith("|") and "/" not in pattern


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", default=os.path.join(REPO, "build/release/adapter/cli/strata"))
    ap.add_argument("--python", default=(sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12"))) or ["python3.12"])[-1])
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="strata-core-bench-")
    gdb = shutil.which("gdb")
    gcore = shutil.which("gcore")
    rows = []
    try:
        cores = []
        # The kernel's core: the process aborted with cores enabled.
        if kernel_core_possible():
            kdir = os.path.join(work, "kernel")
            os.mkdir(kdir)
            p = start(args.python, args.mb, kdir, True)
            p.send_signal(signal.SIGABRT)
            p.wait()
            found = [f for f in os.listdir(kdir) if f.startswith("core")]
            if found:
                cores.append(("kernel (SIGABRT)", os.path.join(kdir, found[0])))
        # strata core --dump, and gcore beside it, of one live process.
        p = start(args.python, args.mb, work, False)
        dumps, gcores = [], []
        try:
            for i in range(args.rounds):
                path = os.path.join(work, f"dump{i}.core")
                took, _ = timed([args.strata, "core", "--dump", str(p.pid), path])
                dumps.append(took)
                if i == 0:
                    cores.append(("strata core --dump", path))
                else:
                    os.unlink(path)
                if gcore:
                    gpath = os.path.join(work, f"gcore{i}")
                    took, _ = timed([gcore, "-o", gpath, str(p.pid)])
                    gcores.append(took)
                    for f in glob.glob(gpath + "*"):
                        os.unlink(f)
        finally:
            p.kill()
            p.wait()
        print(f"# open_core.py, {args.rounds} rounds, {os.path.basename(args.python)}, {args.mb} MB written, 8 threads, load {loadavg()}")
        print("| core | size (MB) | `strata core` (s) | `strata core --json` (s) | gdb `thread apply all bt` (s, no Python frames) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, path in cores:
            text, js, g = [], [], []
            for _ in range(args.rounds):
                text.append(timed([args.strata, "core", path])[0])
                js.append(timed([args.strata, "core", "--json", path])[0])
                if gdb:
                    g.append(timed([gdb, "-batch", "-nx", "-ex", "thread apply all bt", args.python, path])[0])
            size = os.path.getsize(path) / 1e6
            print(f"| {name} | {size:.0f} | {summary(text, '%.2f')} | {summary(js, '%.2f')} | {summary(g, '%.2f') if g else 'no gdb'} |")
        print()
        print("| taking the core of the running process | time (s) |")
        print("| --- | ---: |")
        print(f"| `strata core --dump` | {summary(dumps, '%.2f')} |")
        print(f"| gcore | {summary(gcores, '%.2f') if gcores else 'no gcore'} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
