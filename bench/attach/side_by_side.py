"""Attach by pid to a running CPython, side by side: strata-dap (attach {"processId"} on a 3.12
program) and debugpy (python3 -m debugpy --listen --pid, which needs gdb, on Debian's 3.11).

Rows: attach → first `stopped` at a breakpoint in the program's hot loop (ms, best / median of
--rounds), and the loop's rate after disconnect over its rate before the attach (1.00: no
overhead left). Each round starts a fresh program (bench/attach/hot_loop.py).

  python3 bench/attach/side_by_side.py [--adapter build/release/adapter/strata-dap] [--rounds 5]
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
sys.path.insert(0, os.path.dirname(HERE))
from bench_dap import Dap, Timeout, ensure_apt, loadavg, now_ms, summary  # noqa: E402

TARGET = os.path.join(HERE, "hot_loop.py")
BP_LINE = next(i for i, l in enumerate(open(TARGET), 1) if "@bp:hot" in l)
REPORT = 2_000_000
WINDOWS = 5  # rate windows of REPORT iterations before the attach and after the detach


class Program:
    """The hot loop, started plainly; its rate lines read as they come."""

    def __init__(self, python):
        self.proc = subprocess.Popen([python, TARGET, str(REPORT)], stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdout.readline() == "ready\n"
        self.rates(2)  # warm-up: the first windows run slower on a fresh interpreter

    def rates(self, n):
        out = []
        while len(out) < n:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the program ended")
            m = re.match(r"rate (\d+)", line)
            if m:
                out.append(float(m.group(1)))
        return out

    def end(self):
        self.proc.kill()
        self.proc.wait()


def stop_and_detach(dap, first_request_at, phases=None):
    """setBreakpoints on the hot line, configurationDone, the breakpoint stop; then detach."""
    dap.request("setBreakpoints", {"source": {"path": TARGET}, "breakpoints": [{"line": BP_LINE}]})
    dap.request("configurationDone")
    seen = []
    while True:
        e = dap.event(["stopped"], timeout=30, keep=seen)
        if e["body"].get("reason") == "breakpoint":
            break
    ms = e["_at"] - first_request_at
    if phases is not None:
        agent_in = [x["_at"] for x in seen if x.get("event") == "output" and
                    "agent is in" in x.get("body", {}).get("output", "")]
        phases.append(agent_in[0] - first_request_at if agent_in else None)
    dap.request("setBreakpoints", {"source": {"path": TARGET}, "breakpoints": []})
    dap.request("continue", {"threadId": e["body"]["threadId"]})
    dap.request("disconnect", {"terminateDebuggee": False})
    return ms


def strata_round(adapter, python):
    prog = Program(python)
    try:
        before = statistics.median(prog.rates(WINDOWS))
        t0 = now_ms()  # the adapter's start counts, as debugpy's injector does
        dap = Dap([adapter])
        dap.request("initialize", {"adapterID": "strata", "linesStartAt1": True, "pathFormat": "path"})
        snapshot = dap.request("attach", {"processId": prog.proc.pid})["_at"] - t0
        phases = []
        ms = stop_and_detach(dap, t0, phases)
        dap.close()
        prog.rates(1)  # the window the detach fell in
        after = statistics.median(prog.rates(WINDOWS))
        return ms, after / before, snapshot, phases[0]
    finally:
        prog.end()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


debugpy_injector_ms = []


def debugpy_round(python):
    prog = Program(python)
    try:
        before = statistics.median(prog.rates(WINDOWS))
        port = free_port()
        t0 = now_ms()
        inj = subprocess.run([python, "-m", "debugpy", "--listen", "127.0.0.1:%d" % port, "--pid", str(prog.proc.pid)],
                             capture_output=True, text=True, timeout=60)
        injected = now_ms() - t0
        if inj.returncode != 0:
            raise RuntimeError("debugpy --pid failed: " + (inj.stderr or inj.stdout)[-300:])
        sock = None
        while sock is None and now_ms() - t0 < 30000:
            try:
                sock = socket.create_connection(("127.0.0.1", port))
            except OSError:
                time.sleep(0.005)
        if sock is None:
            raise RuntimeError("debugpy never listened")
        dap = Dap(sock=sock)
        dap.request("initialize", {"adapterID": "debugpy", "linesStartAt1": True, "pathFormat": "path"})
        seq = dap.send("attach", {"justMyCode": True})
        dap.event(["initialized"], timeout=30)
        ms = stop_and_detach(dap, t0)
        dap.wait(seq, 10)
        debugpy_injector_ms.append(injected)
        dap.close()
        prog.rates(1)
        after = statistics.median(prog.rates(WINDOWS))
        return ms, after / before, None, None
    finally:
        prog.end()


def main():
    ap = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(HERE))
    ap.add_argument("--adapter", default=os.path.join(root, "build/release/adapter/strata-dap"))
    ap.add_argument("--python", default=os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python3.12"))
    ap.add_argument("--debugpy-python", default="/usr/bin/python3")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()

    have_debugpy = ensure_apt("python3-debugpy", lambda: subprocess.run(
        [a.debugpy_python, "-c", "import debugpy"], capture_output=True).returncode == 0)
    have_gdb = ensure_apt("gdb", lambda: subprocess.run(["gdb", "--version"], capture_output=True).returncode == 0)
    rows = {"strata": [], "debugpy": []}
    notes = []
    for _ in range(a.rounds):
        rows["strata"].append(strata_round(a.adapter, a.python))
        if have_debugpy and have_gdb:
            try:
                rows["debugpy"].append(debugpy_round(a.debugpy_python))
            except (RuntimeError, Timeout, subprocess.TimeoutExpired) as e:
                notes.append("debugpy: %s" % e)
    v = lambda py: subprocess.run([py, "-c", "import sys;print('%d.%d.%d'%sys.version_info[:3])"],
                                  capture_output=True, text=True).stdout.strip()
    print("attach by pid to a running hot loop (%d rounds; load %s)\n" % (a.rounds, loadavg()))
    print("| peer | target | attach → first breakpoint stop (ms, best / median) | loop rate after disconnect / before (best / median) |")
    print("| --- | --- | --- | --- |")
    for name, py in (("strata-dap (%s)" % os.path.relpath(a.adapter, root), a.python), ("debugpy --pid (gdb)", a.debugpy_python)):
        r = rows["strata" if name.startswith("strata") else "debugpy"]
        print("| %s | CPython %s | %s | %s |" % (name, v(py), summary([x[0] for x in r], "%.0f"),
                                                summary([x[1] for x in r], "%.2f", best=max)))
    st = rows["strata"]
    print("\nstrata-dap's phases (ms from its start, best / median): attach answered with the snapshot %s; "
          "the agent in (its output event) %s." % (summary([x[2] for x in st], "%.0f"), summary([x[3] for x in st], "%.0f")))
    if debugpy_injector_ms:
        print("debugpy's injector (python -m debugpy --pid, through gdb) alone: %s ms." % summary(debugpy_injector_ms, "%.0f"))
    for n in sorted(set(notes)):
        print("\n" + n)


if __name__ == "__main__":
    main()
