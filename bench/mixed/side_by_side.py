#!/usr/bin/env python3
"""Mixed mode (Python + C++ in one session) beside the single-layer sessions, in one run.

The program is examples/mixed/driver.py with its mixed_ext extension (built by CMake with
-g -O0 for each CPython the agent is built for). Each scenario runs --rounds times, a fresh
adapter and program a round; min / median are printed.

  hot    a false-condition breakpoint (`x < 0`) in the C++ function checksum, called --hits
         times from a Python loop: the cost of one hit = (the loop's duration under the
         debugger − in a plain run) / hits, both timed by the program itself
         (CLOCK_MONOTONIC around the loop). Mixed mode against a native-only session on the
         same interpreter (the python executable launched as a native program).
  loop   the same loop with no breakpoint at all, and with a Python breakpoint in a function
         that is never called: its duration under each session / in a plain run. Mixed mode
         against a Python-only session.
  stack  a native breakpoint in checksum at the bottom of a --depth deep Python recursion:
         from sending `stackTrace` (levels 20) to its response at each of --stops stops.
         Mixed mode (C++ frames with the Python ones spliced in, read from memory) against
         the native-only session (the interpreter's C frames).

Usage: nice -n -20 python3 bench/mixed/side_by_side.py [--build build/release] [--python PATH]
Python 3 standard library only.
"""

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DRIVER = os.path.join(ROOT, "examples", "mixed", "driver.py")
EXT_SRC = os.path.join(ROOT, "examples", "mixed", "mixed_ext.cpp")
sys.path.insert(0, os.path.dirname(HERE))
from bench_dap import Dap, loadavg, summary  # noqa: E402


def marker(path, name):
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if "mixed: " + name in text:
                return n
    raise SystemExit("no marker mixed: %s in %s" % (name, path))


def default_python():
    for v in ("3.12", "3.13"):
        found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s" % (v, v))))
        if found:
            return found[-1]
    return "python3.12"


class Session:
    """One strata-dap over stdio, launched on the driver in one of three ways."""

    def __init__(self, adapter, kind, python, ext_dir, args):
        self.kind = kind
        self.dap = Dap([adapter, "--stdio"])
        self.dap.request("initialize", {"adapterID": "strata", "linesStartAt1": True, "columnsStartAt1": True,
                                        "pathFormat": "path"})
        env = {"PYTHONPATH": ext_dir}
        if kind == "native":  # the interpreter as a native program: the native debugger only
            launch = {"program": python, "args": [DRIVER] + args, "env": env}
        else:
            launch = {"program": DRIVER, "python": python, "args": args, "env": env, "native": kind == "mixed"}
        self.dap.request("launch", launch, timeout=120)
        self.dap.event(["initialized"], timeout=60)

    def breakpoints(self, path, bps):
        return self.dap.request("setBreakpoints", {"source": {"path": path}, "breakpoints": bps})

    def run(self):
        self.dap.request("configurationDone")

    def wait_end(self, timeout=600):
        self.dap.event(["terminated"], timeout=timeout)

    def close(self):
        self.dap.close()


def loop_ns(path):
    with open(path) as f:
        return int(f.read().split()[0])


def plain_loop(python, ext_dir, hits, out):
    subprocess.run([python, DRIVER, "--loop", str(hits), "--loop-time", out], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, PYTHONPATH=ext_dir))
    ns = loop_ns(out)
    os.unlink(out)
    return ns


def debugged_loop(adapter, kind, python, ext_dir, hits, out, native_bp=None, python_bp=None):
    s = Session(adapter, kind, python, ext_dir, ["--loop", str(hits), "--loop-time", out])
    try:
        if native_bp:
            s.breakpoints(EXT_SRC, [native_bp])
        if python_bp:
            s.breakpoints(DRIVER, [python_bp])
        s.run()
        s.wait_end()
    finally:
        s.close()
    ns = loop_ns(out)
    os.unlink(out)
    return ns


def stack_times(adapter, kind, python, ext_dir, depth, stops):
    s = Session(adapter, kind, python, ext_dir, ["--deep", str(depth), "--repeat", str(stops)])
    times, sizes = [], []
    try:
        s.breakpoints(EXT_SRC, [{"line": marker(EXT_SRC, "checksum_line")}])
        s.run()
        for _ in range(stops):
            ev = s.dap.event(["stopped"], timeout=120)
            tid = ev["body"]["threadId"]
            t0 = time.monotonic_ns()
            r = s.dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 20})
            times.append((time.monotonic_ns() - t0) / 1e6)
            sizes.append(len(r["body"]["stackFrames"]))
            s.dap.request("continue", {"threadId": tid})
        s.wait_end()
    finally:
        s.close()
    return times, sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--python", default=default_python())
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hits", type=int, default=20000)
    ap.add_argument("--depth", type=int, default=14)
    ap.add_argument("--stops", type=int, default=20)
    a = ap.parse_args()
    adapter = os.path.join(a.build, "adapter", "strata-dap")
    ext_dir = os.path.join(a.build, "examples", "mixed")
    if not os.path.exists(adapter) or not glob.glob(os.path.join(ext_dir, "mixed_ext*.so")):
        raise SystemExit("build %s first (cmake --preset release && cmake --build --preset release -j2)" % a.build)
    tmp = tempfile.mkdtemp(prefix="strata-mixed-bench-")
    out = os.path.join(tmp, "loop_ns")
    print("mixed-mode bench: %s, %s, load %s, %d rounds" % (adapter, a.python, loadavg(), a.rounds), flush=True)

    false_bp = {"line": marker(EXT_SRC, "checksum_line"), "condition": "x < 0"}
    never_bp = {"line": marker(DRIVER, "py_never_line")}
    plain, hot = [], {"mixed": [], "native": []}
    loops = {("python", None): [], ("mixed", None): [], ("python", "never"): [], ("mixed", "never"): []}
    for _ in range(a.rounds):
        plain.append(plain_loop(a.python, ext_dir, a.hits, out))
        for kind in hot:
            hot[kind].append(debugged_loop(adapter, kind, a.python, ext_dir, a.hits, out, native_bp=false_bp))
        for (kind, bp) in loops:
            loops[(kind, bp)].append(debugged_loop(adapter, kind, a.python, ext_dir, a.hits, out,
                                                   python_bp=never_bp if bp else None))
    base = statistics.median(plain)

    print("\nhot: a false-condition C++ breakpoint hit %d times from a Python loop (plain loop %.1f ms)" %
          (a.hits, base / 1e6))
    print("| session | per hit (µs, min / median) | hits per second (median) |")
    print("| --- | --- | --- |")
    per_hit = {}
    for kind in ("mixed", "native"):
        us = [max(ns - base, 0) / a.hits / 1e3 for ns in hot[kind]]
        per_hit[kind] = statistics.median(us)
        print("| %s | %s | %.0f |" % ("mixed (Python + native)" if kind == "mixed" else "native only", summary(us, "%.2f"),
                                     1e6 / per_hit[kind] if per_hit[kind] else float("inf")))
    if per_hit["native"]:
        print("mixed / native cost per hit: %.2fx" % (per_hit["mixed"] / per_hit["native"]))

    print("\nloop: the same loop without C++ breakpoints, duration / plain run (min / median)")
    print("| session | no breakpoint | a Python breakpoint in a function never called |")
    print("| --- | --- | --- |")
    for kind, label in (("python", "Python only"), ("mixed", "mixed (Python + native)")):
        r0 = [ns / base for ns in loops[(kind, None)]]
        r1 = [ns / base for ns in loops[(kind, "never")]]
        print("| %s | %s | %s |" % (label, summary(r0, "%.3fx"), summary(r1, "%.3fx")))

    print("\nstack: stop at a C++ breakpoint under a %d-deep Python recursion, stackTrace levels 20 (%d stops a round)" %
          (a.depth, a.stops))
    print("| session | frames answered | stackTrace ms (min / median over all stops) |")
    print("| --- | --- | --- |")
    for kind, label in (("mixed", "mixed: C++ and Python frames"), ("native", "native only: C frames")):
        ts, sz = [], []
        for _ in range(a.rounds):
            t, s = stack_times(adapter, kind, a.python, ext_dir, a.depth, a.stops)
            ts += t
            sz += s
        print("| %s | %d | %s |" % (label, statistics.median(sz), summary(ts, "%.2f")))


if __name__ == "__main__":
    main()
