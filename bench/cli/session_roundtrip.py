#!/usr/bin/env python3
"""`strata session` command round trips, beside what a terminal or an agent does without a
session: start the program again to the same stop each time.

    bench/cli/session_roundtrip.py [--build build/release] [--python PY] [--rounds 30]

At a breakpoint of a Python program (tests/targets/python/loop.py, helper) and of a native one
(tests/targets/native/dap/native_demo.cpp, square), each round is one `strata stack` or
`strata eval` command: a new `strata` process that connects to the session's socket, asks, and
prints the answer (wall time from its start to its exit, as the caller sees it). Beside them, in
the same run: `strata run --break` to the same Python stop (a one-shot debug run), and
`gdb -batch` to the same native stop (`break`, `run`, `bt`). Median and 90th percentile in ms.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def marker(path, name, comment):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if f"{comment} @bp:{name}" in line:
                return i
    raise SystemExit(f"no @bp:{name} in {path}")


def timed(cmd, env, ok=lambda r: r.returncode == 0):
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    ms = (time.perf_counter() - t) * 1000
    if not ok(r):
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return ms


def row(name, samples):
    samples = sorted(samples)
    p90 = samples[min(len(samples) - 1, int(len(samples) * 0.9))]
    print(f"| {name} | {statistics.median(samples):.1f} | {p90:.1f} | {len(samples)} |")


def newest_python():
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip() or os.path.expanduser("~/.pyenv")
    found = sorted(p for p in (os.path.join(root, "versions", v, "bin", "python3") for v in os.listdir(os.path.join(root, "versions")))
                   if os.path.exists(p)) if os.path.isdir(os.path.join(root, "versions")) else []
    for p in reversed(found):
        v = subprocess.run([p, "-c", "import sys; print(sys.version_info[1])"], capture_output=True, text=True).stdout.strip()
        if v.isdigit() and 12 <= int(v) <= 13:
            return p
    return shutil.which("python3")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--python", default=None)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    strata = os.path.join(args.build, "adapter", "cli", "strata")
    demo = os.path.join(args.build, "tests", "targets", "native_demo")
    for need in (strata, demo):
        if not os.path.exists(need):
            raise SystemExit(f"{need} is missing: build the release preset first")
    py = args.python or newest_python()
    loop = os.path.join(REPO, "tests", "targets", "python", "loop.py")
    demo_src = os.path.join(REPO, "tests", "targets", "native", "dap", "native_demo.cpp")
    helper = marker(loop, "helper_body", "#")
    square = marker(demo_src, "square_body", "//")
    home = tempfile.mkdtemp(prefix="strata-bench-")
    os.chmod(home, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=home)
    try:
        subprocess.run([strata, "session", "start", "--name", "py", "--break", f"{loop}:{helper}", "--run", "--", py, loop],
                       env=env, check=True, capture_output=True)
        subprocess.run([strata, "session", "start", "--name", "c", "--break", f"{demo_src}:{square}", "--run", "--", demo, "steps"],
                       env=env, check=True, capture_output=True)
        results = {}
        for _ in range(args.rounds):
            results.setdefault("py stack", []).append(timed([strata, "stack", "--session", "py"], env))
            results.setdefault("py eval", []).append(timed([strata, "eval", "--session", "py", "x * 2"], env))
            results.setdefault("c stack", []).append(timed([strata, "stack", "--session", "c"], env))
            results.setdefault("c eval", []).append(timed([strata, "eval", "--session", "c", "v * 2"], env))
        oneshot_py, gdb = [], []
        gdb_path = shutil.which("gdb")
        for _ in range(max(3, args.rounds // 5)):
            oneshot_py.append(timed([strata, "run", "--break", f"{loop}:{helper}:x == 0", "--", py, loop], env))
            if gdb_path:
                gdb.append(timed([gdb_path, "-batch", "-nx", "-ex", f"break native_demo.cpp:{square}", "-ex", "run", "-ex", "bt",
                                  "--args", demo, "steps"], env, ok=lambda r: "square" in r.stdout))
    finally:
        subprocess.run([strata, "session", "end", "--all"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)

    print(f"Python {py}; {args.rounds} rounds each; ms, wall time of the command as its caller sees it\n")
    print("| command | median ms | p90 ms | runs |")
    print("| --- | --- | --- | --- |")
    row("`strata stack` at a Python stop (session)", results["py stack"])
    row("`strata eval x * 2` at a Python stop (session)", results["py eval"])
    row("`strata stack` at a C++ stop (session)", results["c stack"])
    row("`strata eval v * 2` at a C++ stop (session)", results["c eval"])
    row("`strata run --break` to the same Python stop, stack printed (one-shot)", oneshot_py)
    if gdb:
        row("`gdb -batch` to the same C++ stop, `bt` (one-shot)", gdb)
    else:
        print("| `gdb -batch` | not installed | | |")


if __name__ == "__main__":
    sys.exit(main())
