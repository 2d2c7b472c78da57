#!/usr/bin/env python3
"""The stacks of every rank of a job at once: `strata stacks --tree` (one merged tree, Python
frames spliced in) against `gdb -batch -ex 'thread apply all bt' -p PID` run for each rank in
turn (native frames only: what people do by hand today), on N rank processes of CPython 3.11
(`rank.py`: rank 0 waits in load_batch, the others in all_reduce). Also the `parallelStacks`
request through strata-dap (a session that launched nothing). Prints a Markdown table of wall
times (median, min, max) for each N.

    bench/stacks/ranks_side_by_side.py [--ranks 8,64] [--runs 5] [--gdb-runs 1] [--python PATH]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))
from bench_dap import Dap  # noqa: E402

TARGET = os.path.join(HERE, "rank.py")


def start_ranks(python, n):
    procs = []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(n))
        procs.append(subprocess.Popen([python, TARGET], stdout=subprocess.PIPE, text=True, env=env))
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            sys.exit("a rank did not start")
    return procs


def timed(fn, runs):
    times = []
    out = None
    for _ in range(runs):
        start = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - start) * 1000)
    return times, out


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def row(name, n, times, note):
    return (f"| {name} | {n} | {statistics.median(times):.0f} | {min(times):.0f} | {max(times):.0f} | "
            f"{len(times)} | {note} |")


def check_tree(tree, n):
    def find(node, prefix):
        if node.get("label", "").startswith(prefix):
            return node
        for c in node.get("children", []):
            got = find(c, prefix)
            if got:
                return got
        return None
    reduce_, load = find(tree["tree"], "all_reduce "), find(tree["tree"], "load_batch ")
    if not reduce_ or reduce_["count"] != n - 1 or not load or load["owners"] != "rank 0":
        sys.exit(f"unexpected tree: {json.dumps(tree)[:400]}")
    return f"all_reduce: {reduce_['owners']}; load_batch: {load['owners']}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="8,64")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gdb-runs", type=int, default=1)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--strata", default=os.path.join(REPO, "build/release/adapter/cli/strata"))
    ap.add_argument("--strata-dap", default=os.path.join(REPO, "build/release/adapter/strata-dap"))
    a = ap.parse_args()
    for exe in (a.strata, a.strata_dap):
        if not os.access(exe, os.X_OK):
            sys.exit(f"{exe} is not built: cmake --preset release && cmake --build --preset release -j2")
    gdb = shutil.which("gdb")
    version = run([a.python, "-c", "import sys; print(sys.version.split()[0])"]).strip()
    print(f"ranks: CPython {version} ({a.python}); {os.cpu_count()} CPUs; load average {os.getloadavg()}\n")
    rows = []
    for n in [int(x) for x in a.ranks.split(",") if x]:
        procs = start_ranks(a.python, n)
        try:
            pids = [str(p.pid) for p in procs]
            cmd = [a.strata, "stacks", "--tree", "--json", *pids]
            run(cmd)  # page cache
            times, out = timed(lambda: run(cmd), a.runs)
            rows.append(row("`strata stacks --tree --json PID...` (Python + native)", n, times, check_tree(json.loads(out), n)))
            cmd = [a.strata, "stacks", "--tree", "--json", "--python-only", *pids]
            times, out = timed(lambda: run(cmd), a.runs)
            rows.append(row("`strata stacks --tree --json --python-only PID...`", n, times, check_tree(json.loads(out), n)))
            dap = Dap([a.strata_dap, "--stdio"])
            try:
                dap.request("initialize", {"clientID": "strata-bench", "adapterID": "strata"})
                ask = lambda: dap.request("parallelStacks", {"processIds": [int(p) for p in pids], "pythonOnly": True},
                                          timeout=120)["body"]
                ask()
                times, body = timed(ask, a.runs)
                rows.append(row("`parallelStacks` request through strata-dap, pythonOnly", n, times, check_tree(body, n)))
            finally:
                dap.close()
            if gdb:
                each = lambda: [run([gdb, "-nx", "-batch", "-ex", "thread apply all bt", "-p", p]) for p in pids]
                times, outs = timed(each, a.gdb_runs)
                rows.append(row("`gdb -batch -ex 'thread apply all bt' -p PID`, each rank in turn", n, times,
                                f"{sum(o.count(chr(10) + '#') for o in outs)} native frames, no Python frames, no merging"))
        finally:
            for p in procs:
                p.kill()
                p.wait()
    print("| command | ranks | median ms | min ms | max ms | runs | what it found |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
