"""The GPU check's torchrun path: the example training job (examples/distributed/train_ddp.py,
gloo) started by torchrun with 2 ranks under strata-dap with "ranks": true. Both ranks stop at
the breakpoint in the training step, threads named per rank, each with its own `rank`; then the
job runs to its end. (Debian's torch 1.13 ships a torchrun that fails under Python 3.11, so this
path runs on the GPU machine's PyTorch.) Prints PASS/FAIL/SKIP lines; exits 1 when a check failed.

  python3 gpu_check_ranks.py --dap DIR/bin/strata-dap --train DIR/train_ddp.py [--python python3]

Needs the agent package (STRATA_AGENT_PYTHONPATH) and torch.distributed.
"""
import argparse
import socket
import subprocess
import sys

import check_report
from check_report import check, marker_line, say
from gpu_check_error_stop import Dap


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_or_end(c, timeout):
    """The next `stopped` event's body; a RuntimeError when the session ends first."""
    while True:
        for e in list(c.events):
            if e["event"] in ("stopped", "terminated"):
                c.events.remove(e)
                if e["event"] == "terminated":
                    raise RuntimeError("the job ended before its ranks stopped")
                return e.get("body") or {}
        c._next(timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dap", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--python", default="python3")
    a = ap.parse_args()
    probe = subprocess.run([a.python, "-c", "import torch.distributed.run, torch.distributed as d; assert d.is_available()"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        say("SKIP", "torchrun ranks", f"torch.distributed.run does not import under {a.python}")
        return 0
    loss = marker_line(a.train, "dist: loss_line")
    c = Dap(a.dap)
    try:
        c.request("initialize", adapterID="strata", linesStartAt1=True, columnsStartAt1=True, pathFormat="path")
        c.request("launch", ranks=True, stopAll=False, program=a.python,
                  args=["-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(free_port()),
                        a.train, "--launched", "--steps", "3"])
        c.event("initialized")
        c.request("setBreakpoints", source={"path": a.train}, breakpoints=[{"line": loss}])
        c.request("configurationDone")
        stops = [stop_or_end(c, 240) for _ in range(2)]
        names = {t["id"]: t["name"] for t in c.request("threads")["threads"]}
        got = sorted(names.get(s.get("threadId"), "?") for s in stops)
        check("torchrun: both ranks stop at the breakpoint, named by rank", got == ["rank 0 / MainThread", "rank 1 / MainThread"],
              f"{got}; all threads: {sorted(set(names.values()))}")
        for s in stops:
            frame = c.request("stackTrace", threadId=s["threadId"], levels=1)["stackFrames"][0]
            scope = next(x for x in c.request("scopes", frameId=frame["id"])["scopes"] if x["name"] == "Locals")
            values = {v["name"]: v["value"] for v in c.request("variables", variablesReference=scope["variablesReference"])["variables"]}
            want = names[s["threadId"]][5:6]
            check(f"torchrun: {names[s['threadId']]} at line {loss} with rank {want}",
                  frame["name"] == "train_step" and frame["line"] == loss and values.get("rank") == want,
                  f"{frame['name']}:{frame['line']} rank={values.get('rank')}")
        c.request("setBreakpoints", source={"path": a.train}, breakpoints=[])
        for s in stops:
            c.request("continue", threadId=s["threadId"])
        c.event("terminated", 240)
        out = c.output()
        check("torchrun: the job ends in both ranks", out.count(" done: loss") == 2, out[-300:].replace("\n", " | "))
    except Exception as e:  # noqa: BLE001 - a check script reports, never crashes
        say("FAIL", "torchrun ranks", f"{type(e).__name__}: {e}; output: {c.output()[-400:]!r}")
    finally:
        c.close()
    return 1 if check_report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
