#!/usr/bin/env python3
"""Native debugging side by side: strata-dap, lldb-dap-19 and gdb on the same scenarios.

Every scenario runs against each debugger in the same invocation, one fresh debugger and one
fresh process a round, min/median of --rounds rounds. Every debugger gets the same program,
the same arguments and the same hit counts:

  hot     a false-condition breakpoint on a hot line passed --hot-hits times: hits per second
          = hits / (the loop's duration under the debugger − in a plain run), both timed by the
          program itself (CLOCK_MONOTONIC around the loop), so no debugger's start-up or
          shut-down is inside the time
  stop    the program sleeps --pause-ms, then stops on a plain line breakpoint (the first
          stop), then --stops − 1 times more on the same line, each after a `continue` (the
          next stops): from the program's CLOCK_REALTIME stamp, taken just before the line,
          to the client's CLOCK_REALTIME on receipt of `stopped` (gdb: of `*stopped`)
  nth     the same after the pause, on the 1000th pass of a hit-condition breakpoint
  deep    1000-deep recursion: the first `stackTrace` page of 20, then paging through all
  json    python3.12 -c "import json;json.dumps([1])" with a function breakpoint on
          encoder_listencode_list (_json.so, loaded later): from spawning the debugger's
          process (every column) to `stopped`
  vector  an unpaged `variables` request on a 100k std::vector: time and bytes answered

strata-dap and lldb-dap-19 are driven over DAP (stdio); gdb over its MI (gdb --interpreter=mi3).
Python 3 standard library only. Installs lldb-19 with apt-get when lldb-dap-19 is missing.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
from bench_dap import ensure_apt, loadavg, summary  # noqa: E402
from drivers import TARGET_SRC, DapDebugger, Facade, GdbMi, read_loop_ns  # noqa: E402


def marker_line(marker):
    with open(TARGET_SRC) as f:
        for n, text in enumerate(f, 1):
            if "// @bp:" + marker in text:
                return n
    raise SystemExit("no marker %s in %s" % (marker, TARGET_SRC))


def plain_loop_ns(target, hits, path):
    """The hot loop's own duration in a plain run (the program times it)."""
    subprocess.run([target, "hot", str(hits), path], stdout=subprocess.DEVNULL, check=True)
    ns = read_loop_ns(path)
    os.unlink(path)  # a debugged run that never writes it must not read this one
    return ns


def build_target(directory):
    out = os.path.join(directory, "bench_target")
    subprocess.run(["g++", "-g", "-O0", "-fno-omit-frame-pointer", "-o", out, TARGET_SRC], check=True)
    return out


def lldb_dap_path(explicit):
    if explicit:
        return explicit
    return ensure_apt("lldb-19", lambda: shutil.which("lldb-dap-19") or shutil.which("lldb-dap"))


def make_debuggers(args, log):
    debuggers = {}
    for n in [n for n in args.debuggers.split(",") if n]:
        if n == "strata":
            if not os.access(args.strata, os.X_OK):
                print("strata-dap not found at %s (cmake --preset release && cmake --build --preset release)"
                      % args.strata)
                continue
            debuggers[n] = DapDebugger("strata", [args.strata, "--stdio"], log=log, breakdown=args.breakdown)
        elif n == "strata-facade":
            if not os.access(args.facade, os.X_OK):
                print("strata_bench_debugger not found at %s (cmake --build --preset release)" % args.facade)
                continue
            debuggers[n] = Facade(args.facade, args.python, args.hot_hits, args.pause_ms, args.stops)
        elif n == "lldb-dap":
            path = lldb_dap_path(args.lldb_dap)
            if not path:
                print("lldb-dap could not be installed; its column stays empty")
                continue
            debuggers[n] = DapDebugger("lldb-dap", [path], log=log)
        elif n == "gdb":
            if not shutil.which(args.gdb):
                print("gdb not found; its column stays empty")
                continue
            debuggers[n] = GdbMi(args.gdb, log)
    return debuggers


def versions(debuggers, args):
    out = []
    if "lldb-dap" in debuggers:
        v = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "lldb-19"], capture_output=True, text=True)
        out.append("lldb-dap: Debian lldb-19 %s" % (v.stdout.strip() or "?"))
    if "gdb" in debuggers:
        v = subprocess.run([args.gdb, "--version"], capture_output=True, text=True).stdout.splitlines()
        out.append(v[0] if v else "gdb ?")
    return ", ".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--debuggers", default="strata,lldb-dap,gdb",
                        help="comma separated: strata,strata-facade,lldb-dap,gdb")
    parser.add_argument("--facade", default=os.path.join(ROOT, "build", "release", "bench", "native",
                                                         "strata_bench_debugger"))
    parser.add_argument("--scenarios", default="hot,stop,nth,deep,json,vector")
    parser.add_argument("--strata", default=os.path.join(ROOT, "build", "release", "adapter", "strata-dap"))
    parser.add_argument("--lldb-dap", default=None, help="default: lldb-dap-19 on PATH (installed if missing)")
    parser.add_argument("--gdb", default="gdb")
    parser.add_argument("--python", default=os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python3.12"))
    parser.add_argument("--hot-hits", type=int, default=3000, help="hits per round of the hot scenario, every debugger")
    parser.add_argument("--pause-ms", type=int, default=1000, help="the program's sleep before the first stop")
    parser.add_argument("--stops", type=int, default=5, help="stops per session of the stop scenario")
    parser.add_argument("--vector-timeout", type=float, default=30, help="seconds before an answer counts as none")
    parser.add_argument("--breakdown", action="store_true",
                        help="strata-dap with --log: split each stop at the moment the adapter wrote `stopped`")
    parser.add_argument("--log", default=None, help="write every message to this file")
    args = parser.parse_args()

    log = open(args.log, "w") if args.log else None
    scenarios = [s for s in args.scenarios.split(",") if s]
    debuggers = make_debuggers(args, log)
    workdir = tempfile.mkdtemp(prefix="strata-bench-")
    target = build_target(workdir)
    loop_file = os.path.join(workdir, "loop_ns")
    lines = {m: marker_line(m) for m in ("hot", "nth", "stop", "deep", "vector")}
    peers = versions(debuggers, args)
    print("rounds: %d, load average at start: %s%s" % (args.rounds, loadavg(), "; " + peers if peers else ""), flush=True)

    results = {}  # (scenario row, debugger) -> list of values

    def record(row, name, value):
        results.setdefault((row, name), []).append(value)

    for r in range(args.rounds):
        for name, dbg in debuggers.items():
            def attempt(label, fn):
                try:
                    return fn()
                except Exception as e:  # a failure is reported and leaves its cell empty
                    print("  %s %s round %d: %s" % (name, label, r + 1, e), flush=True)
                    return None

            if "hot" in scenarios and hasattr(dbg, "hot_rate"):
                record("hot", name, attempt("hot", dbg.hot_rate))
            elif "hot" in scenarios:
                plain = plain_loop_ns(target, args.hot_hits, loop_file)
                ns = attempt("hot", lambda: dbg.hot(target, args.hot_hits, lines["hot"], loop_file))
                if ns is not None:
                    record("hot", name, args.hot_hits / max((ns - plain) / 1e9, 1e-9))
            for marker, run_args, count in (("stop", ["stops", str(args.stops), str(args.pause_ms)], args.stops),
                                            ("nth", ["nth", "2000", str(args.pause_ms)], 1)):
                if marker not in scenarios:
                    continue
                if hasattr(dbg, "latencies"):
                    for row, values in (attempt(marker, lambda: dbg.latencies(marker)) or {}).items():
                        for v in values:
                            record(row, name, v)
                    continue
                for k, (stamp, wall, sent) in enumerate(
                        attempt(marker, lambda: dbg.stops(target, lines[marker], marker, run_args, count)) or []):
                    row = "nth" if marker == "nth" else "first" if k == 0 else "next"
                    record(row, name, (wall - stamp) / 1e6)
                    if sent:
                        record(row + "-adapter", name, (sent - stamp) / 1e6)
            if "deep" in scenarios:
                out = attempt("deep", lambda: dbg.deep(target, lines["deep"]))
                if out:
                    record("deep-first", name, out[0])
                    record("deep-all", name, out[1])
            if "json" in scenarios and os.access(args.python, os.X_OK):
                record("json", name, attempt("json", lambda: dbg.json_launch(args.python)))
            if "vector" in scenarios:
                out = attempt("vector", lambda: dbg.vector(target, lines["vector"], args.vector_timeout))
                if out:
                    answered = out[0] is not None
                    record("vector-ms", name, out[0] if answered else None)
                    record("vector-kb", name, out[1] / 1024 if answered else None)
                    record("vector-n", name, out[2] if answered else None)
        print("round %d done" % (r + 1), flush=True)
    print_table(results, list(debuggers), args)
    shutil.rmtree(workdir, ignore_errors=True)


def print_table(results, names, args):
    rows = [
        ("hot", "false-condition breakpoint on a hot line, %d hits, hits/s (max / median)" % args.hot_hits, "%.0f"),
        ("first", "first stop, %d ms after start: line reached → `stopped` received, ms" % args.pause_ms, "%.2f"),
        ("first-adapter", "  of which line reached → strata-dap writes `stopped`, ms", "%.2f"),
        ("next", "next stops (`continue` → same line): line reached → `stopped` received, ms", "%.2f"),
        ("next-adapter", "  of which line reached → strata-dap writes `stopped`, ms", "%.2f"),
        ("nth", "1000th pass of a hit-condition breakpoint → `stopped` received, ms", "%.2f"),
        ("nth-adapter", "  of which line reached → strata-dap writes `stopped`, ms", "%.2f"),
        ("deep-first", "stackTrace, first page of 20 at depth 1000, ms", "%.2f"),
        ("deep-all", "stackTrace, paging through all 1000 frames (20 a page), ms", "%.1f"),
        ("json", "python3.12 → stop in _json.so (encoder_listencode_list), from the debugger's spawn, ms", "%.0f"),
        ("vector-ms", "unpaged variables on a 100k std::vector, ms", "%.1f"),
        ("vector-kb", "  its answer, KiB", "%.1f"),
        ("vector-n", "  children in the answer", "%.0f"),
    ]
    print()
    print("min / median of %d rounds (%d next stops a round); load average at the end: %s"
          % (args.rounds, max(args.stops - 1, 0), loadavg()))
    print()
    print("| scenario | " + " | ".join(names) + " |")
    print("| --- | " + " | ".join("---:" for _ in names) + " |")
    for key, label, fmt in rows:
        if not any((key, n) in results for n in names):
            continue
        cells = []
        for n in names:
            values = results.get((key, n), [])
            if key == "hot":
                cells.append(summary(values, fmt, best=max))
            elif key.startswith("vector") and values and all(v is None for v in values):
                cells.append("no answer in %.0f s" % args.vector_timeout)
            elif key == "vector-ms" and any(v is None for v in values):
                answered = sum(v is not None for v in values)
                cells.append(summary(values, fmt) + " (%d of %d answered in %.0f s)"
                             % (answered, len(values), args.vector_timeout))
            else:
                cells.append(summary(values, fmt))
        print("| %s | %s |" % (label, " | ".join(cells)))


if __name__ == "__main__":
    main()
