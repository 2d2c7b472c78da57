#!/usr/bin/env python3
"""The debugger killed with SIGKILL while attached: what becomes of the program, side by side.

A C program (tests/targets native_demo `output FILE ROUNDS DELAY_MS`, started here, so its exit
status is ours to see) is attached to by pid; a conditional breakpoint on its output line
(`i > 0`) stops it. Then the debugger's process gets SIGKILL, in two scenarios:

  stopped   at that stop
  running   after a `continue`, while the program runs through a false conditional breakpoint
            (`i < 0`, reinstalled), i.e. with the breakpoint inserted in its code

Measured from the kill (CLOCK_MONOTONIC, polled every 0.2 ms): the time until the program is
untraced (TracerPid 0 in /proc/PID/status) and running (not in a stop), and how it ends: exit 0
with every line written, or killed by a signal. strata-dap and lldb-dap-19 are driven over DAP,
gdb over its MI. Python 3 standard library only.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
from bench_dap import Dap, ensure_apt, loadavg, summary  # noqa: E402
from drivers import Mi  # noqa: E402

DEMO_SRC = os.path.join(ROOT, "tests", "targets", "native", "dap", "native_demo.cpp")


def output_line():
    with open(DEMO_SRC) as f:
        for n, text in enumerate(f, 1):
            if "// @bp:output_line" in text:
                return n
    raise SystemExit("no @bp:output_line in " + DEMO_SRC)


def status_of(pid):
    """(TracerPid, state letter) of a process, or None once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            text = f.read()
    except OSError:
        return None
    tracer = int(text.split("TracerPid:")[1].split()[0])
    state = text.split("State:")[1].split()[0]
    return tracer, state


def wait_free(pid, limit_s=10):
    """ms from now until the program is untraced and not stopped (None: it died first)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        s = status_of(pid)
        if s is None or s[1] in ("Z", "X"):
            return None
        if s[0] == 0 and s[1] not in ("t", "T"):
            return (time.monotonic() - t0) * 1000
        time.sleep(0.0002)
    return None


class DapAttach:
    def __init__(self, name, argv, attach_args, continue_after_attach=False):
        self.name = name
        self.argv = argv
        self.attach_args = attach_args
        self.continue_after_attach = continue_after_attach  # lldb-dap leaves an attached process stopped

    def attach_and_stop(self, pid, line, condition):
        dap = Dap(self.argv)
        dap.request("initialize", {"clientID": "strata-bench", "adapterID": self.name, "linesStartAt1": True,
                                   "columnsStartAt1": True, "pathFormat": "path"})
        seq = dap.send("attach", self.attach_args(pid))
        dap.event(["initialized"], 30)
        r = dap.request("setBreakpoints", {"source": {"path": DEMO_SRC},
                                           "breakpoints": [{"line": line, "condition": condition}]})
        if not all(b.get("verified") for b in r["body"]["breakpoints"]):
            raise RuntimeError("%s: breakpoint not verified: %s" % (self.name, r["body"]["breakpoints"]))
        dap.request("configurationDone")
        dap.wait(seq, 30)
        if self.continue_after_attach:
            threads = dap.request("threads")["body"]["threads"]
            dap.request("continue", {"threadId": threads[0]["id"]})
        while True:
            e = dap.event(["stopped"], 30)
            if e["body"].get("reason") in ("breakpoint", "conditional breakpoint"):
                return dap, e["body"].get("threadId")

    def run_through(self, dap, tid, line):
        dap.request("setBreakpoints", {"source": {"path": DEMO_SRC},
                                       "breakpoints": [{"line": line, "condition": "i < 0"}]})
        dap.request("continue", {"threadId": tid})

    def process(self, dap):
        return dap.proc


class GdbAttach:
    name = "gdb"

    def attach_and_stop(self, pid, line, condition):
        mi = Mi(["gdb", "--interpreter=mi3", "-q", "-nx"])
        mi.command("-gdb-set confirm off")
        mi.command("-target-attach %d" % pid, timeout=60)
        mi.command('-break-insert -c "%s" %s:%d' % (condition, DEMO_SRC, line))
        mi.command("-exec-continue")
        mi.expect(lambda l: l.startswith("*stopped") and "breakpoint-hit" in l, 30)
        return mi, None

    def run_through(self, mi, tid, line):
        mi.command("-break-delete")
        mi.command('-break-insert -c "i < 0" %s:%d' % (DEMO_SRC, line))
        mi.command("-exec-continue")

    def process(self, mi):
        return mi.proc


def one_round(debugger, demo, scenario, rounds, line):
    with tempfile.TemporaryDirectory(prefix="strata-survive-") as d:
        out = os.path.join(d, "out.txt")
        prog = subprocess.Popen([demo, "output", out, str(rounds), "5"], stdout=subprocess.DEVNULL)
        try:
            while not (os.path.exists(out) and "line 0 " in open(out).read()):
                time.sleep(0.005)
            session, tid = debugger.attach_and_stop(prog.pid, line, "i > 0")
            if scenario == "running":
                debugger.run_through(session, tid, line)
                time.sleep(0.2)  # hits passing through the false condition
            proc = debugger.process(session)
            proc.send_signal(signal.SIGKILL)
            free_ms = wait_free(prog.pid)
            proc.wait()
            code = prog.wait(timeout=60)
            with open(out) as f:
                text = f.read()
            complete = text.count("\n") == rounds + 1 and text.endswith("done\n")
            if code == 0 and complete:
                outcome = "ran to its end"
            elif code < 0:
                outcome = "killed by %s" % signal.Signals(-code).name
            else:
                outcome = "exit %d, %s" % (code, "all lines" if complete else "lines missing")
            return free_ms, outcome
        finally:
            if prog.poll() is None:
                prog.kill()
                prog.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--debuggers", default="strata,lldb-dap,gdb")
    parser.add_argument("--strata", default=os.path.join(ROOT, "build", "release", "adapter", "strata-dap"))
    parser.add_argument("--demo", default=os.path.join(ROOT, "build", "release", "tests", "targets", "native_demo"))
    parser.add_argument("--lldb-dap", default=None, help="default: lldb-dap-19 on PATH (installed if missing)")
    args = parser.parse_args()
    for p in (args.strata, args.demo):
        if not os.path.exists(p):
            raise SystemExit("%s not found (cmake --preset release && cmake --build --preset release)" % p)
    debuggers = []
    for name in args.debuggers.split(","):
        if name == "strata":
            debuggers.append(DapAttach("strata", [args.strata], lambda pid: {"processId": pid}))
        elif name == "lldb-dap":
            lldb = args.lldb_dap or ensure_apt("lldb-19", lambda: shutil.which("lldb-dap-19"))
            debuggers.append(DapAttach("lldb-dap", [lldb], lambda pid: {"pid": pid}, continue_after_attach=True))
        elif name == "gdb":
            debuggers.append(GdbAttach())
    line = output_line()
    results = {}
    for r in range(args.rounds):
        for scenario in ("stopped", "running"):
            for d in debuggers:
                results.setdefault((scenario, d.name), []).append(one_round(d, args.demo, scenario, 3000, line))
        print("round %d done" % (r + 1), file=sys.stderr)
    print("\nmin / median of %d rounds; load average at the end: %s\n" % (args.rounds, loadavg()))
    print("| debugger killed (SIGKILL) while attached | " + " | ".join(d.name for d in debuggers) + " |")
    print("| --- |" + " ---: |" * len(debuggers))
    for scenario, label in (("stopped", "at a breakpoint stop"), ("running", "while the program runs through a false condition")):
        times, outcomes = [], []
        for d in debuggers:
            rs = results[(scenario, d.name)]
            freed = [ms for ms, _ in rs if ms is not None]
            times.append(summary(freed, "%.1f") if len(freed) == len(rs) else "never (%d of %d)" % (len(rs) - len(freed), len(rs)))
            kinds = sorted(set(o for _, o in rs))
            outcomes.append("; ".join("%s (%d)" % (k, sum(1 for _, o in rs if o == k)) for k in kinds))
        print("| %s: kill → program untraced and running, ms | %s |" % (label, " | ".join(times)))
        print("| %s: what became of the program | %s |" % (label, " | ".join(outcomes)))


if __name__ == "__main__":
    main()
