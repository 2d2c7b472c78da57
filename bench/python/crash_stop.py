#!/usr/bin/env python3
"""How soon a crash stops a debug session: a Python program that reads an unmapped address
through ctypes (crash_workload.py, which stamps CLOCK_REALTIME on the line before), launched
through strata-dap over stdio as an IDE would, min / median of --rounds rounds of:

  python  a plain Python launch: the agent's crash guard tells the adapter, whose native
          debugger attaches and stops at the fault (the session taken over)
  native  the same launch with "native": true: the native debugger traced it from the start
          (the floor: no hand-over)

Each row: the stamp to the client's receipt of `stopped` (ms), then the time from `stopped` to
the crashing thread's whole merged stack (a stackTrace of 200 frames).

    python3 bench/python/crash_stop.py [--strata build/release/adapter/strata-dap] [--rounds 5]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
from bench_dap import Dap, Timeout, loadavg, summary  # noqa: E402

WORKLOAD = os.path.join(HERE, "crash_workload.py")
INIT = {"adapterID": "strata", "linesStartAt1": True, "columnsStartAt1": True, "pathFormat": "path"}


def one(argv, launch, stamp, adapter_id="strata"):
    d = Dap(argv)
    try:
        d.request("initialize", {**INIT, "adapterID": adapter_id, "clientID": "strata-bench"})
        seq = d.send("launch", launch)
        d.event(["initialized"], timeout=60)
        d.request("configurationDone")  # debugpy answers the launch only after it
        if not d.wait(seq).get("success"):
            raise RuntimeError("launch failed")
        e = d.event(["stopped", "terminated"], timeout=60)
        with open(stamp) as f:
            crashed = int(f.read())
        to_stop = (e["_wall_ns"] - crashed) / 1e6
        if e["event"] != "stopped":
            return None, to_stop
        st = d.request("stackTrace", {"threadId": e["body"]["threadId"], "startFrame": 0, "levels": 200})
        return to_stop, st["_at"] - e["_at"]
    finally:
        d.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", default=os.path.join(REPO, "build/release/adapter/strata-dap"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--python", default=(sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12"))) or ["python3.12"])[-1])
    args = ap.parse_args()
    stamp = os.path.join(tempfile.mkdtemp(prefix="strata-crash-bench-"), "stamp")
    rows = {"python": ([], []), "native": ([], [])}
    for _ in range(args.rounds):
        for route, extra in (("python", {}), ("native", {"native": True})):
            launch = {"program": WORKLOAD, "python": args.python, "args": [stamp, "0.2"], **extra}
            stop, stack = one([args.strata, "--stdio"], launch, stamp)
            rows[route][0].append(stop)
            rows[route][1].append(stack)
    print(f"# crash_stop.py, {args.rounds} rounds, {os.path.basename(args.python)}, load {loadavg()}")
    print("| route | crash → `stopped` (ms) | `stopped` → merged stack (ms) |")
    print("| --- | ---: | ---: |")
    print(f"| strata-dap, Python launch (crash guard, taken over) | {summary(rows['python'][0], '%.1f')} | {summary(rows['python'][1], '%.1f')} |")
    print(f"| strata-dap, `\"native\": true` (traced from the start) | {summary(rows['native'][0], '%.1f')} | {summary(rows['native'][1], '%.1f')} |")


if __name__ == "__main__":
    main()
