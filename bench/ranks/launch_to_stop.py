#!/usr/bin/env python3
"""Launch of a 4-rank training job to every rank stopped at a breakpoint in its first training
step, through strata-dap (launch {"ranks": true}), against the same job run plainly to the same
point (every rank has printed "rank R of 4 ready", right before that step): what Strata adds to
the job's own start-up. The job is examples/distributed/train_ddp.py (gloo, CPU) under mpirun
(`--launcher mpirun`) or torch.multiprocessing.spawn (`--launcher spawn`).

No other debugger starts every rank of an mpirun job under it, so the job's own start-up is the
baseline. Prints a Markdown table (median, min, max of --runs runs each).

    bench/ranks/launch_to_stop.py [--launcher mpirun,spawn] [--runs 3] [--python /usr/bin/python3]
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))
from bench_dap import Dap  # noqa: E402

TRAIN = os.path.join(REPO, "examples/distributed/train_ddp.py")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_plm_rsh_agent": ""}
RANKS = 4


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def marker_line(name):
    with open(TRAIN) as f:
        for i, line in enumerate(f, 1):
            if f"dist: {name}" in line:
                return i
    sys.exit(f"no marker {name} in {TRAIN}")


def command(launcher, python, port):
    if launcher == "mpirun":
        return ["mpirun", "-n", str(RANKS), "--oversubscribe", "--bind-to", "none", python, TRAIN, "--launched",
                "--steps", "2", "--port", str(port)]
    return [python, TRAIN, "--world", str(RANKS), "--steps", "2", "--port", str(port)]


def plain(launcher, python):
    """Seconds from start to the last rank's "ready" line (the job then runs to its end)."""
    env = dict(os.environ, **MPI_ENV)
    start = time.perf_counter()
    proc = subprocess.Popen(command(launcher, python, free_port()), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    ready = 0
    took = None
    for line in proc.stdout:
        # The ranks write to one stream: two lines may come as one.
        ready += len(re.findall(r"rank \d+ of \d+ ready", line))
        if ready >= RANKS and took is None:
            took = time.perf_counter() - start
    if proc.wait() != 0 or took is None:
        sys.exit(f"the plain {launcher} job failed")
    return took


def debugged(launcher, python, strata_dap):
    """Seconds from the launch request to the last rank's breakpoint stop, and that of the first."""
    cmd = command(launcher, python, free_port())
    dap = Dap([strata_dap, "--stdio"])
    try:
        dap.request("initialize", {"clientID": "strata-bench", "adapterID": "strata", "linesStartAt1": True,
                                   "columnsStartAt1": True, "pathFormat": "path"})
        launch = {"ranks": True, "stopAll": False, "program": cmd[0], "args": cmd[1:], "env": MPI_ENV}
        if launcher == "spawn":
            launch.update(program=TRAIN, python=python, args=cmd[2:])
        start = time.perf_counter()
        seq = dap.send("launch", launch)
        dap.request("setBreakpoints", {"source": {"path": TRAIN}, "breakpoints": [{"line": marker_line("loss_line")}]})
        dap.request("configurationDone")
        r = dap.wait(seq, 120)
        if not r.get("success"):
            sys.exit(f"launch failed: {r.get('message')}")
        stops = []
        while len(stops) < RANKS:
            e = dap.event(["stopped"], timeout=120)
            if e["body"].get("reason") == "breakpoint":
                stops.append(time.perf_counter() - start)
        threads = dap.request("threads")["body"]["threads"]
        names = sorted(t["name"] for t in threads if t["name"].endswith("/ MainThread") and t["name"].startswith("rank"))
        if names != [f"rank {r} / MainThread" for r in range(RANKS)]:
            sys.exit(f"unexpected threads: {names}")
        return stops[-1], stops[0]
    finally:
        dap.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", default="mpirun,spawn")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--strata-dap", default=os.path.join(REPO, "build/release/adapter/strata-dap"))
    a = ap.parse_args()
    if not os.access(a.strata_dap, os.X_OK):
        sys.exit(f"{a.strata_dap} is not built: cmake --preset release && cmake --build --preset release -j2")
    version = subprocess.run([a.python, "-c", "import sys, torch; print(sys.version.split()[0], torch.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    print(f"{RANKS} ranks, CPython and torch {version} ({a.python}); {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()}\n")
    rows = []
    for launcher in [x for x in a.launcher.split(",") if x]:
        base, last, first = [], [], []
        for _ in range(a.runs):
            base.append(plain(launcher, a.python))
            lst, fst = debugged(launcher, a.python, a.strata_dap)
            last.append(lst)
            first.append(fst)
        med = statistics.median
        rows.append(f"| {launcher} | {med(base):.2f} ({min(base):.2f}-{max(base):.2f}) | "
                    f"{med(first):.2f} | {med(last):.2f} ({min(last):.2f}-{max(last):.2f}) | "
                    f"**{med(last) - med(base):+.2f}** | {a.runs} |")
    print("| launcher | plain job: start → every rank ready, s | Strata: launch → first rank stopped, s | "
          "Strata: launch → every rank stopped, s | added by Strata, s | runs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
