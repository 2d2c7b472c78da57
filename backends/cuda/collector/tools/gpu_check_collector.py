"""The collector's part of the GPU check: runs the CUDA examples (and a late start under
Python) through strata_gpu_dump and checks what only a GPU can show. Prints PASS/FAIL/SKIP
lines; exits 1 when a check failed. (What collection costs is bench/gpu/collection_overhead.py's.)

  python3 gpu_check_collector.py --dump DIR/strata_gpu_dump --examples DIR/examples \
      --sources DIR/examples-src [--python python3] [--work /tmp/x]

--examples holds vector_add, streams, oob_write, launch_loop; --sources their .cu files (for
the marked lines); late_start.py is found beside this script.
"""
import json
import os
import subprocess
import sys

import check_report
from check_report import STICKY, arguments, check, marker_line, say


def run_dump(args, work, tag, program, mode="stacks", extra=()):
    report = os.path.join(work, tag + ".json")
    cmd = [args.dump, "--mode", mode, "--report", report, *extra, "--", *program]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if not os.path.exists(report):
        say("FAIL", tag, f"no report; exit {done.returncode}; stderr: {done.stderr[-2000:]}")
        return None, done
    with open(report) as f:
        return json.load(f), done


def said(stdout, prefix):
    """The program's own summary line (the dump prints its report after it)."""
    return next((l for l in stdout.splitlines() if l.startswith(prefix)), "(no line starting " + prefix + ")")


def kernels(report, prefix):
    return [k for k in report["kernels"] if k["demangled"].startswith(prefix) or prefix in k["name"]]


def collecting(report):
    states = {p["state"] for p in report["processes"]}
    return bool(report["processes"]) and states <= {"collecting", "stopped"}, ", ".join(
        f'{p["pid"]}: {p["state"]}: {p["status"]}' for p in report["processes"]) or "no ring"


def no_drops(report):
    procs = report["processes"]
    return bool(procs) and all(p["droppedRecords"] == 0 and p["cuptiDropped"] == 0 for p in procs)


def site_has_line(report, site_ids, source, line):
    sites = {s["id"]: s for s in report["sites"]}
    for sid in site_ids:
        for f in sites.get(sid, {}).get("native", []) + sites.get(sid, {}).get("python", []):
            if f.get("file", "").endswith(source) and f.get("line") == line:
                return True
    return False


def check_counts_and_lines(args, work):
    src = os.path.join(args.sources, "vector_add.cu")
    report, done = run_dump(args, work, "vector_add", [os.path.join(args.examples, "vector_add"), "1000"])
    if report:
        ok, states = collecting(report)
        check("vector_add collector state", ok, states)
        ks = kernels(report, "vector_add")
        count = sum(k["count"] for k in ks)
        check("vector_add kernel count equals launches", count == 1000 and "1000 launches" in done.stdout,
              f"{count} kernels recorded; program said: {said(done.stdout, 'vector_add:')}")
        check("vector_add copies", report["counts"].get("memcpy") == 3, f'{report["counts"].get("memcpy")} memcpy records')
        check("vector_add nothing dropped", no_drops(report), json.dumps(report["processes"]))
        line = marker_line(src, "@launch:vector_add")
        sids = [s["site"] for k in ks for s in k["sites"]]
        check("vector_add launch line", site_has_line(report, sids, "vector_add.cu", line),
              f"sites {sids} should hold vector_add.cu:{line}")
    report, done = run_dump(args, work, "vector_add_trace", [os.path.join(args.examples, "vector_add"), "1000"], "trace")
    if report:
        count = sum(k["count"] for k in kernels(report, "vector_add"))
        check("trace mode: counts without sites", count == 1000 and not report["sites"] and
              all(p["unjoinedLaunches"] == 0 for p in report["processes"]), f"{count} kernels, {len(report['sites'])} sites")
    src = os.path.join(args.sources, "streams.cu")
    report, done = run_dump(args, work, "streams", [os.path.join(args.examples, "streams"), "4"])
    if report:
        ks = kernels(report, "scale")
        count = sum(k["count"] for k in ks)
        check("streams kernel count", count == 64 and "64 launches" in done.stdout, f"{count} kernels; program said: {said(done.stdout, 'streams:')}")
        check("streams copies", report["counts"].get("memcpy") == 128, f'{report["counts"].get("memcpy")} memcpy records')
        check("streams copies overlap kernels", report["copiesOverlappingKernels"] > 0,
              f'{report["copiesOverlappingKernels"]} copies ran during a kernel on another stream')
        line = marker_line(src, "@launch:scale")
        sids = [s["site"] for k in ks for s in k["sites"]]
        check("streams launch line", site_has_line(report, sids, "streams.cu", line), f"sites {sids} vs streams.cu:{line}")


def check_error_stop(args, work):
    src = os.path.join(args.sources, "oob_write.cu")
    report, done = run_dump(args, work, "oob_write", [os.path.join(args.examples, "oob_write")])
    if not report:
        return
    errors = report["errors"]
    if not errors:
        say("FAIL", "oob_write error stop", f"no CUDA error recorded; program said: {said(done.stdout, 'oob_write:')}")
        return
    e = errors[0]
    line = marker_line(src, "@error:sync")
    check("oob_write error named", e["api"] == "cudaDeviceSynchronize" and STICKY.get(e["result"]) == e["error"],
          json.dumps(e))
    check("oob_write last kernel", "fill" in e["lastKernel"], e["lastKernel"])
    check("oob_write error line", e["caller"]["file"].endswith("oob_write.cu") and e["caller"]["line"] == line,
          f'{e["caller"]} vs oob_write.cu:{line}')


def check_late_start(args, work):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "late_start.py")
    report, done = run_dump(args, work, "late_start", [args.python, script], extra=("--late",))
    if done.returncode == 77:
        say("SKIP", "late start", done.stdout.strip())
        return
    if not report:
        return
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        say("FAIL", "late start", f"exit {done.returncode}: {done.stdout[-1000:]} {done.stderr[-1000:]}")
        return
    info = json.loads(lines[-1])
    check("late start returns 0", info["start"] == 0 and info["stop"] == 0, json.dumps(info))
    total = sum(k["count"] for k in report["kernels"])
    check("late start records only the launches between start and stop", total == info["during"],
          f'{total} kernels recorded, {info["during"]} launched while collecting')
    check("late stop releases CUPTI", info["statusAtEnd"] == "stopped: stopped; CUPTI released", info["statusAtEnd"])
    marker = "@late:" + info["backend"]
    line = marker_line(script, marker)
    sids = [s["site"] for k in report["kernels"] for s in k["sites"]]
    check("late start Python launch line", site_has_line(report, sids, "late_start.py", line),
          f"sites {sids} should hold late_start.py:{line}")


def main():
    args = arguments(("dump", "examples", "sources"), "strata-gpu-check-")
    work = args.work  # the reports go here
    check_counts_and_lines(args, work)
    check_error_stop(args, work)
    check_late_start(args, work)
    print(f"reports in {work}")
    return 1 if check_report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
