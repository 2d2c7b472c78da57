"""Strata Python agent overhead: the workload attached, and with a breakpoint in a never-called
function, against a plain run in the same invocation (process CPU time, and with --instructions
callgrind's instruction counts); prints a table. Per-hit costs and latencies, side by side with
debugpy and through strata-dap, are in side_by_side.py."""
import argparse
import os
import socket
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
from dap_client import DapClient, agent_pythonpath, markers  # noqa: E402

WORKLOAD = os.path.join(HERE, "workload.py")
M = markers(WORKLOAD)


def env():
    return dict(os.environ, PYTHONPATH=agent_pythonpath())


def plain(args):
    out = subprocess.run([sys.executable, WORKLOAD, *args], capture_output=True, text=True, env=env())
    return float(out.stdout.split("elapsed")[1])


def callgrind(tag):
    """A prefix that counts the instructions every thread of the process executes."""
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={os.devnull}", f"--log-file={tag}"]


def collected(log):
    with open(log) as f:
        for line in f:
            if "Collected :" in line:
                return int(line.split("Collected :")[1])
    raise RuntimeError(f"no instruction count in {log}")


class Debugged:
    """The workload under `python -m strata --connect`, driven by a client over the link."""

    def __init__(self, args, setup=None, prefix=()):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.proc = subprocess.Popen([*prefix, sys.executable, "-m", "strata", "--connect",
                                      f"127.0.0.1:{self.srv.getsockname()[1]}", WORKLOAD, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        self.srv.settimeout(60)
        sock, _ = self.srv.accept()
        self.c = DapClient(sock)
        self.c.request("initialize", adapterID="bench")
        if setup:
            setup(self.c)
        self.c.request("configurationDone")

    def finish(self):
        out, err = self.proc.communicate(timeout=120)
        self.c.close()
        self.srv.close()
        if self.proc.returncode:
            raise RuntimeError(err)
        return out


def elapsed_of(out):
    return float(out.split("elapsed")[1])


def bp(line, **kw):
    def setup(c):
        c.request("setBreakpoints", source={"path": WORKLOAD}, breakpoints=[dict(line=line, **kw)])
    return setup


def ratio_rounds(rounds, args, setup=None):
    ratios = []
    for _ in range(rounds):
        p = plain(args)
        d = elapsed_of(Debugged(args, setup).finish())
        ratios.append(d / p)
    return ratios


def instruction_ratio(n1, n2, setup=None, bare_tool=False):
    """Instructions per workload iteration under the agent over those of a plain run: the
    difference between two sizes cancels start-up, and counting instructions (callgrind)
    cancels the machine's load. Agent threads are counted too, and run more often per
    iteration than they would natively (valgrind is slower, their timers are not)."""
    import tempfile
    d = tempfile.mkdtemp()
    counts = {}
    for kind in ("plain", "agent"):
        for n in (n1, n2):
            log = os.path.join(d, f"{kind}-{n}.log")
            args = ["mixed", str(n), "1"]
            if kind == "plain" or bare_tool:
                extra = ["bare-tool"] if kind == "agent" else []
                subprocess.run([*callgrind(log), sys.executable, WORKLOAD, *extra, *args], capture_output=True,
                               env=env(), check=True)
            else:
                Debugged(args, setup, prefix=callgrind(log)).finish()
            counts[kind, n] = collected(log)
    per_plain = (counts["plain", n2] - counts["plain", n1]) / (n2 - n1)
    per_agent = (counts["agent", n2] - counts["agent", n1]) / (n2 - n1)
    return per_agent / per_plain, per_plain, per_agent


def fmt(values, unit, digits=3):
    return f"min {min(values):.{digits}f}{unit}  median {statistics.median(values):.{digits}f}{unit}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--instructions", action="store_true",
                    help="also count instructions (valgrind) for the two ratio rows: load-independent")
    ap.add_argument("--passes", type=int, default=3,
                    help="passes of the mixed workload in each process; the fastest counts")
    ap.add_argument("--only", default="attached,never", help="comma-separated subset of: attached,never")
    a = ap.parse_args()
    only = set(a.only.split(","))
    r = a.rounds
    n_mixed = 1000000 if not a.quick else 200000
    rows = []
    v = sys.version_info
    load = os.getloadavg()[0]
    print(f"Strata Python agent overhead, CPython {v[0]}.{v[1]}.{v[2]}, {r} rounds, "
          f"{os.cpu_count()} CPUs, load {load:.1f}; ratios use process CPU time; "
          f"ratio rows: fastest of {a.passes} passes per process")
    mixed_args = ["mixed", str(n_mixed), str(a.passes)]
    if "attached" in only:
        ratios = ratio_rounds(r, mixed_args)
        rows.append(("attached, no breakpoints (ratio)", fmt(ratios, "x"), "<= 1.02x"))
    if "never" in only:
        ratios = ratio_rounds(r, mixed_args, bp(M["never"]))
        rows.append(("breakpoint in never-called function (ratio)", fmt(ratios, "x"), "<= 1.02x"))
    if a.instructions and "attached" in only:
        ratio, p, d = instruction_ratio(100000, 300000)
        rows.append(("attached, no breakpoints (instructions)", f"{ratio:.4f}x ({d:.0f} vs {p:.0f} per iteration)",
                     "<= 1.02x"))
    if a.instructions and "never" in only:
        ratio, p, d = instruction_ratio(100000, 300000, bp(M["never"]))
        rows.append(("breakpoint in never-called function (instructions)",
                     f"{ratio:.4f}x ({d:.0f} vs {p:.0f} per iteration)", "<= 1.02x"))
        ratio, p, d = instruction_ratio(100000, 300000, bare_tool=True)
        rows.append(("  a bare PY_START tool, no agent (instructions)",
                     f"{ratio:.4f}x ({d:.0f} vs {p:.0f} per iteration)", ""))
    w = max(len(x[0]) for x in rows)
    w2 = max(len(x[1]) for x in rows)
    print(f"{'benchmark':<{w}}  {'result':<{w2}}  target")
    for name, res, target in rows:
        print(f"{name:<{w}}  {res:<{w2}}  {target}")


if __name__ == "__main__":
    main()
