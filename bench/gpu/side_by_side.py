#!/usr/bin/env python3
"""GPU store benchmarks in one run (see README.md):

  (a) importing a 1M-event Kineto trace (.json and .json.gz) with Strata, against json.load
      plus one Python pass over the events, in the same run;
  (b) ingestion rate into a store (records/s), writing a 10M-record store;
  (c) gpuTimeline latency and item counts from the whole span down to 1 µs on that store,
      and the peak RSS.

    python3 bench/gpu/side_by_side.py [--bench PATH] [--events N] [--records N] [--rounds N]
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# The baseline: what a script does with a trace in Python, timed inside the interpreter.
BASELINE = r"""
import gzip, json, sys, time
path = sys.argv[1]
t0 = time.perf_counter()
with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
    doc = json.load(f)
base = doc.get("baseTimeNanoseconds", 0)
kernels, launches, n = {}, {}, 0
for ev in doc["traceEvents"]:
    n += 1
    if ev.get("ph") != "X":
        continue
    cat = ev.get("cat")
    ts = base + round(ev["ts"] * 1000)
    dur = round(ev.get("dur", 0) * 1000)
    args = ev.get("args", {})
    if cat == "kernel":
        k = kernels.setdefault(ev["name"], [0, 0, dur, dur])
        k[0] += 1; k[1] += dur; k[2] = min(k[2], dur); k[3] = max(k[3], dur)
    elif cat == "cuda_runtime":
        launches[args.get("correlation")] = (ts, dur)
print("baseline: %d events, %d kernel names, %.3f s" % (n, len(kernels), time.perf_counter() - t0))
"""


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.stdout


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(ROOT, "build/release/backends/cuda/store/bench/strata_bench_gpu"))
    ap.add_argument("--dir", default="/tmp/strata-gpu-bench")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-items", type=int, default=2000)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    print("# GPU store bench: %s, %d CPUs, %s; load average at start: %s"
          % (platform.node(), os.cpu_count(), platform.processor() or platform.machine(), loadavg()))
    py_version = run([args.python, "-c", "import sys; print(sys.version.split()[0])"]).strip()

    traces = {}
    for kind, extra in (("json", []), ("json.gz", ["--gzip"])):
        path = os.path.join(args.dir, "trace-%d.%s" % (args.events, kind))
        if not os.path.exists(path):
            run([sys.executable, os.path.join(HERE, "gen_kineto.py"), path, "--events", str(args.events)] + extra)
        traces[kind] = path

    print("\n## (a) Import of a %d-event Kineto trace\n" % args.events)
    print("| file | size | Strata import (s) | json.load + pass, Python %s (s) | Python / Strata |" % py_version)
    print("|---|---|---|---|---|")
    for kind, path in traces.items():
        strata, python = [], []
        for _ in range(args.rounds):
            out = run([args.bench, "import", "--trace", path, "--store", os.path.join(args.dir, "import.strata")])
            strata.append(float(re.search(r"in ([0-9.]+) s", out).group(1)))
            out = run([args.python, "-c", BASELINE, path])
            python.append(float(re.search(r"([0-9.]+) s$", out.strip()).group(1)))
        s, p = statistics.median(strata), statistics.median(python)
        print("| %s | %.0f MiB | %.3f | %.3f | %.1fx |" % (kind, os.path.getsize(path) / 1048576, s, p, p / s))
    print("\n(median of %d rounds; each Strata import writes a new store with every record, its "
          "level-of-detail pages and statistics)" % args.rounds)

    print("\n## (b) Ingestion\n")
    store = os.path.join(args.dir, "store-%d.strata" % args.records)
    rates = []
    for _ in range(args.rounds):
        out = run([args.bench, "ingest", "--store", store, "--records", str(args.records)])
        print("    " + out.strip())
        rates.append(float(re.search(r"([0-9.]+) M records/s", out).group(1)))
    print("\nmedian: %.2f M records/s" % statistics.median(rates))

    print("\n## (c) gpuTimeline on %d records\n" % args.records)
    print(run([args.bench, "timeline", "--store", store, "--max-items", str(args.max_items)]))
    print("load average at end: %s" % loadavg())


if __name__ == "__main__":
    main()
