#!/usr/bin/env python3
"""Python debugging side by side: strata-dap, the Strata agent without the adapter, and debugpy.

Every scenario runs the same workload (workload.py) under each debugger on each Python, one
fresh debugger and one fresh process a round, min / median of --rounds rounds:

  attached  no breakpoints: process CPU time of a mixed workload (calls, arithmetic, str)
         under the debugger over a plain run (the fastest of --passes passes in each process)
  never  the same with one breakpoint, in a function the workload never calls
  cond   a false condition (`i < 0`) on a hot line: process CPU time of the target (every
         thread) minus a plain run of the same workload, per hit
  log    a log point on a hot line: the same, per hit, and how many of its lines arrive
  stop   the program sleeps --pause s, then stops on a plain breakpoint (the first stop), and
         --stops - 1 times more on the same line, each after a `continue` (the next stops):
         from the program's CLOCK_REALTIME, taken on the line before, to the client's
         CLOCK_REALTIME on receipt of `stopped`; on each stop, the time from `stopped` to the
         first 100 children of a 100k list (stackTrace, scopes, variables, variables)
  hit    the program sleeps --pause s, then a hot loop stamps CLOCK_REALTIME before the line
         with a `hitCondition: "1000"` breakpoint: stamp of the 1000th pass → `stopped` received
  start  from spawning the first process (the adapter, or the program for the direct route)
         to the first line of the script, on the program's clock

The routes: `strata-dap` (stdio, launched as an IDE would), `agent` (python -m strata
--connect, the bench speaking DAP to the agent itself, no adapter) and `debugpy` (Debian's
python3-debugpy, its adapter over stdio, run by /usr/bin/python3; on other Pythons it runs
with PYTHONPATH=/usr/lib/python3/dist-packages, without the Cython speedups Debian builds for
its own Python only). Installs python3-debugpy with apt-get when missing. Standard library only.
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
from bench_dap import Dap, Timeout, ensure_apt, loadavg, strata_log_events, summary, wall_ns  # noqa: E402
from dap_client import markers  # noqa: E402

WORKLOAD = os.path.join(HERE, "workload.py")
M = markers(WORKLOAD)
SYSTEM_PYTHON = "/usr/bin/python3"
DEBIAN_PACKAGES = "/usr/lib/python3/dist-packages"
PYENV = os.path.expanduser("~/.pyenv/versions")


def python_version(python):
    out = subprocess.run([python, "-c", "import platform;print(platform.python_version())"],
                         capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def read_report(path):
    """{'elapsed': [...], 'first_line': [...]} from what the workload wrote."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                key, *values = line.split()
                out.setdefault(key, []).append([float(v) for v in values])
    except OSError:
        pass
    return out


def plain(python, args):
    fd, report = tempfile.mkstemp(prefix="strata-bench-")
    os.close(fd)
    t_spawn = wall_ns()
    subprocess.run([python, WORKLOAD, *args], stdout=subprocess.DEVNULL, check=True,
                   env=dict(os.environ, STRATA_BENCH_REPORT=report))
    got = read_report(report)
    os.unlink(report)
    return got, t_spawn


class Run:
    """One debugged run of the workload: the DAP peer, and where the workload reports."""

    def __init__(self, dap, report, t_spawn, log=None, proc=None, server=None):
        self.dap, self.report_path, self.t_spawn, self.log, self.proc, self.server = \
            dap, report, t_spawn, log, proc, server
        self.events = []

    def finish(self, timeout=300):
        """Waits for the end of the session (terminated, or the agent closing the link),
        keeping every event on the way; returns the workload's report."""
        try:
            self.dap.event(["terminated"], timeout, keep=self.events)
        except Timeout:
            if not self.dap.closed:
                raise
        self.close()
        got = read_report(self.report_path)
        return got

    def close(self):
        self.dap.close()
        if self.proc:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.server:
            self.server.close()

    def cleanup(self):
        for path in (self.report_path, self.log):
            if path and os.path.exists(path):
                os.unlink(path)


class Route:
    """One debugger on one Python."""

    def __init__(self, kind, python, version, strata=None, breakdown=False):
        self.kind, self.python, self.version, self.strata, self.breakdown = kind, python, version, strata, breakdown
        self.label = "%s %s" % (kind, version)

    def start(self, args, breakpoints):
        fd, report = tempfile.mkstemp(prefix="strata-bench-")
        os.close(fd)
        env = {"STRATA_BENCH_REPORT": report}
        init = {"clientID": "strata-bench", "adapterID": self.kind, "linesStartAt1": True,
                "columnsStartAt1": True, "pathFormat": "path"}
        launch_seq, log, proc, server = None, None, None, None
        t_spawn = wall_ns()
        if self.kind == "agent":
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            server.settimeout(60)
            agent = os.path.join(os.path.dirname(os.path.dirname(self.strata)), "backends", "python", "python")
            proc = subprocess.Popen([self.python, "-m", "strata", "--connect", "127.0.0.1:%d" % server.getsockname()[1],
                                     WORKLOAD, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=dict(os.environ, PYTHONPATH=agent, **env))
            dap = Dap(sock=server.accept()[0])
            dap.request("initialize", init)
        else:
            if self.kind == "strata-dap":
                argv = [self.strata, "--stdio"]
                if self.breakdown:
                    fd, log = tempfile.mkstemp(prefix="strata-bench-log-")
                    os.close(fd)
                    argv += ["--log", log]
                launch = {"python": self.python}
            else:
                argv = [SYSTEM_PYTHON, "-m", "debugpy.adapter"]
                if self.python != SYSTEM_PYTHON:
                    env["PYTHONPATH"] = DEBIAN_PACKAGES
                launch = {"python": [self.python], "justMyCode": True}
            dap = Dap(argv)
            dap.request("initialize", init)
            launch.update({"program": WORKLOAD, "args": args, "cwd": HERE, "env": env, "console": "internalConsole"})
            launch_seq = dap.send("launch", launch)
            dap.event(["initialized"], 60)
        run = Run(dap, report, t_spawn, log, proc, server)
        try:
            if breakpoints:
                r = dap.request("setBreakpoints", {"source": {"path": WORKLOAD}, "breakpoints": breakpoints})
                if not all(b.get("verified") for b in r["body"]["breakpoints"]):
                    raise RuntimeError("breakpoint not verified: %s" % r["body"]["breakpoints"])
            dap.request("configurationDone")
            if launch_seq is not None:
                r = dap.wait(launch_seq)
                if not r.get("success"):
                    raise RuntimeError("launch failed: %s" % r.get("message"))
        except Exception:
            run.close()
            run.cleanup()
            raise
        return run


def evaluate(dap, frame, expression):
    r = dap.request("evaluate", {"expression": expression, "frameId": frame, "context": "watch"})
    return int(re.match(r"-?\d+", r["body"]["result"]).group(0))


def attached_ratio(route, n, passes, breakpoints=()):
    args = ["mixed", str(n), str(passes)]
    base, _ = plain(route.python, args)
    run = route.start(args, list(breakpoints))
    try:
        got = run.finish()
    finally:
        run.cleanup()
    return got["elapsed"][0][0] / base["elapsed"][0][0]


def per_hit(route, hits, breakpoint, count_lines=False):
    """µs a hit over a plain run of the same process, and the log lines that arrived."""
    base, _ = plain(route.python, ["hot", str(hits)])
    run = route.start(["hot", str(hits)], [dict(line=M["hot"], **breakpoint)])
    try:
        got = run.finish()
    finally:
        run.cleanup()
    if any(e.get("event") == "stopped" for e in run.events):
        raise RuntimeError("stopped on a breakpoint that should not stop")
    cost = (got["elapsed"][0][0] - base["elapsed"][0][0]) / hits * 1e6
    lines = None
    if count_lines:
        text = "".join(e["body"].get("output", "") for e in run.events if e.get("event") == "output")
        lines = len(re.findall(r"i=\d+ acc=\d+", text))
    return cost, lines


def stop_scenario(route, stops, pause):
    """[(latency ms, children ms, children answered, adapter-sent ns or None, t_reached ns)] per stop."""
    run = route.start(["stops", str(stops), str(pause)], [{"line": M["stop"]}])
    out = []
    try:
        dap = run.dap
        for _ in range(stops):
            ev = dap.event(["stopped"], 60)
            t0 = time.perf_counter()
            tid = ev["body"]["threadId"]
            frame = dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 20})["body"]["stackFrames"][0]
            scope = dap.request("scopes", {"frameId": frame["id"]})["body"]["scopes"][0]
            local = {v["name"]: v for v in dap.request(
                "variables", {"variablesReference": scope["variablesReference"]})["body"]["variables"]}
            kids = dap.request("variables", {"variablesReference": local["big"]["variablesReference"],
                                             "filter": "indexed", "start": 0, "count": 100})["body"]["variables"]
            children_ms = (time.perf_counter() - t0) * 1e3
            reached = evaluate(dap, frame["id"], "t_reached")
            out.append([(ev["_wall_ns"] - reached) / 1e6, children_ms, len(kids), ev["_wall_ns"], reached])
            dap.request("continue", {"threadId": tid})
        run.finish()
        if run.log:
            for row, sent in zip(out, strata_log_events(run.log, "stopped")):
                row.append(sent)
    finally:
        run.close()
        run.cleanup()
    return out


def hit_scenario(route, pause):
    run = route.start(["hit", "2000", str(pause)], [{"line": M["hit"], "hitCondition": "1000"}])
    try:
        dap = run.dap
        ev = dap.event(["stopped"], 60)
        frame = dap.request("stackTrace", {"threadId": ev["body"]["threadId"], "startFrame": 0,
                                           "levels": 1})["body"]["stackFrames"][0]["id"]
        reached = evaluate(dap, frame, "t_reached")
        passes = evaluate(dap, frame, "i") + 1
        if passes != 1000:
            raise RuntimeError("stopped on pass %d, not the 1000th" % passes)
        dap.request("continue", {"threadId": ev["body"]["threadId"]})
        run.finish()
        sent = strata_log_events(run.log, "stopped")[:1] if run.log else []
        return (ev["_wall_ns"] - reached) / 1e6, ev["_wall_ns"], reached, (sent or [None])[0]
    finally:
        run.close()
        run.cleanup()


def start_scenario(route):
    run = route.start(["start"], [])
    try:
        got = run.finish()
    finally:
        run.cleanup()
    return (got["first_line"][0][0] - run.t_spawn) / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pythons", default="%s/3.12.1/bin/python3.12,%s/3.13.0/bin/python3.13" % (PYENV, PYENV),
                        help="Pythons for every route (Strata needs 3.10 or newer)")
    parser.add_argument("--debugpy-pythons", default=SYSTEM_PYTHON,
                        help="Pythons only debugpy runs on, besides --pythons ('' for none)")
    parser.add_argument("--routes", default="strata-dap,agent,debugpy")
    parser.add_argument("--scenarios", default="attached,never,cond,log,stop,hit,start")
    parser.add_argument("--mixed", type=int, default=300000, help="iterations of the attached scenario's workload")
    parser.add_argument("--passes", type=int, default=3, help="passes of it in each process; the fastest counts")
    parser.add_argument("--strata", default=os.path.join(REPO, "build", "release", "adapter", "strata-dap"),
                        help="strata-dap; the agent route takes the agent from the same build")
    parser.add_argument("--cond-hits", type=int, default=300000)
    parser.add_argument("--log-hits", type=int, default=100000)
    parser.add_argument("--stops", type=int, default=5, help="stops per session of the stop scenario")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds the program sleeps before its first stop")
    parser.add_argument("--breakdown", action="store_true",
                        help="strata-dap with --log: split each stop at the moment the adapter wrote `stopped`")
    a = parser.parse_args()
    kinds = a.routes.split(",")
    scenarios = set(a.scenarios.split(","))

    if ("strata-dap" in kinds or "agent" in kinds) and not os.access(a.strata, os.X_OK):
        raise SystemExit("strata-dap not found at %s (cmake --preset release && cmake --build --preset release)"
                         % a.strata)
    debugpy_version = None
    if "debugpy" in kinds:
        def present():
            r = subprocess.run([SYSTEM_PYTHON, "-c", "import debugpy;print(debugpy.__version__)"],
                               capture_output=True, text=True)
            return r.stdout.strip() if r.returncode == 0 else None
        if ensure_apt("python3-debugpy", present):
            package = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3-debugpy"],
                                     capture_output=True, text=True).stdout.strip()
            debugpy_version = package or present()
        else:
            print("python3-debugpy could not be installed; no debugpy columns")
            kinds.remove("debugpy")

    routes = []
    for python in [p for p in a.pythons.split(",") if p]:
        version = python_version(python)
        if not version:
            print("%s does not run; skipped" % python)
            continue
        for kind in kinds:
            routes.append(Route(kind, python, version, a.strata, a.breakdown and kind == "strata-dap"))
    if "debugpy" in kinds:
        for python in [p for p in a.debugpy_pythons.split(",") if p]:
            version = python_version(python)
            if version:
                routes.append(Route("debugpy", python, version))
    print("rounds: %d, load average at start: %s; debugpy: Debian python3-debugpy %s" %
          (a.rounds, loadavg(), debugpy_version or "-"), flush=True)

    results = {}

    def record(row, route, value):
        results.setdefault((row, route.label), []).append(value)

    for r in range(a.rounds):
        for route in routes:
            def attempt(label, fn):
                try:
                    return fn()
                except Exception as e:  # a failure is reported and leaves its cell empty
                    print("  %s %s round %d: %s: %s" % (route.label, label, r + 1, type(e).__name__, e), flush=True)
                    return None
            if "attached" in scenarios:
                record("attached", route, attempt("attached", lambda: attached_ratio(route, a.mixed, a.passes)))
            if "never" in scenarios:
                record("never", route, attempt("never", lambda: attached_ratio(
                    route, a.mixed, a.passes, [{"line": M["never"]}])))
            if "cond" in scenarios:
                got = attempt("cond", lambda: per_hit(route, a.cond_hits, {"condition": "i < 0"}))
                if got:
                    record("cond", route, got[0])
            if "log" in scenarios:
                got = attempt("log", lambda: per_hit(route, a.log_hits, {"logMessage": "i={i} acc={acc}"}, True))
                if got:
                    record("log", route, got[0])
                    record("log-lines", route, got[1] * 100.0 / a.log_hits)
            if "stop" in scenarios:
                for i, s in enumerate(attempt("stop", lambda: stop_scenario(route, a.stops, a.pause)) or []):
                    record("first" if i == 0 else "next", route, s[0])
                    record("children", route, s[1])
                    record("children-n", route, s[2])
                    if len(s) > 5:
                        record("first-adapter" if i == 0 else "next-adapter", route, (s[5] - s[4]) / 1e6)
            if "hit" in scenarios:
                got = attempt("hit", lambda: hit_scenario(route, a.pause))
                if got:
                    record("hit", route, got[0])
                    if got[3]:
                        record("hit-adapter", route, (got[3] - got[2]) / 1e6)
            if "start" in scenarios:
                record("start", route, attempt("start", lambda: start_scenario(route)))
        if "start" in scenarios:
            for python in dict.fromkeys(rt.python for rt in routes):
                got, t_spawn = plain(python, ["start"])
                results.setdefault(("start-plain", python_version(python)), []).append(
                    (got["first_line"][0][0] - t_spawn) / 1e6)
        print("round %d done" % (r + 1), flush=True)

    print_table(results, routes, a)


def print_table(results, routes, a):
    rows = [
        ("attached", "attached, no breakpoints: CPU time over a plain run, ratio", "%.2f×"),
        ("never", "breakpoint in a never-called function: CPU time over a plain run, ratio", "%.2f×"),
        ("cond", "false condition on a hot line, µs a hit", "%.2f"),
        ("log", "log point on a hot line, µs a hit", "%.2f"),
        ("log-lines", "  its lines delivered, % (min / median)", "%.0f"),
        ("first", "first stop, %g s after start: line reached → `stopped` received, ms" % a.pause, "%.2f"),
        ("first-adapter", "  of which line reached → strata-dap writes `stopped`, ms", "%.2f"),
        ("next", "next stops (`continue` → same line): line reached → `stopped` received, ms", "%.2f"),
        ("next-adapter", "  of which line reached → strata-dap writes `stopped`, ms", "%.2f"),
        ("hit", "1000th pass of a hit-condition breakpoint → `stopped` received, ms", "%.2f"),
        ("hit-adapter", "  of which line reached → strata-dap writes `stopped`, ms", "%.2f"),
        ("children", "`stopped` → first 100 children of a 100k list, ms", "%.2f"),
        ("start", "spawn of the first process → first line of the script, ms", "%.0f"),
    ]
    print()
    print("min / median of %d rounds (%d stops a round for the next stops); load average at the end: %s"
          % (a.rounds, max(a.stops - 1, 0), loadavg()))
    print()
    labels = [rt.label for rt in routes]
    print("| measurement | " + " | ".join(labels) + " |")
    print("| --- | " + " | ".join("---:" for _ in labels) + " |")
    for key, label, fmt in rows:
        if not any((key, lb) in results for lb in labels):
            continue
        cells = []
        for lb in labels:
            cell = summary(results.get((key, lb), []), fmt)
            if key == "children":
                counts = [n for n in results.get(("children-n", lb), []) if n is not None]
                if counts and set(counts) != {100}:
                    cell += " (%s children)" % "/".join("%d" % n for n in sorted(set(counts)))
            cells.append(cell)
        print("| %s | %s |" % (label, " | ".join(cells)))
    plains = [(k[1], v) for k, v in results.items() if k[0] == "start-plain"]
    if plains:
        print()
        print("plain python, spawn → first line, ms: " + ", ".join(
            "%s %s" % (version, summary(values, "%.0f")) for version, values in plains))


if __name__ == "__main__":
    main()
