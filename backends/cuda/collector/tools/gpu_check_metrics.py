"""GPU check: hardware metrics of the vector-add kernel through `strata gpu run --profile`.

Runs examples/vector_add with a profile request for two launches of `vector_add` and prints what
came back: the measured metrics (SM and DRAM throughput, achieved occupancy, GPU time) of each
launch, or the sentence saying why none could be measured (a machine that restricts the GPU's
performance counters to administrators says which permission is missing). Either answer passes;
silence, a crash of the program, or a store without the answer fails.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_report import check, say  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--strata", required=True)
    p.add_argument("--examples", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    store = os.path.join(args.work, "profiled.strata")
    if os.path.exists(store):
        os.remove(store)
    run = subprocess.run([args.strata, "gpu", "run", "--profile", "vector_add:2", "--store", store, "--",
                          os.path.join(args.examples, "vector_add"), "20"],
                         capture_output=True, text=True, timeout=120)
    lines = [l for l in run.stderr.splitlines() if "hardware metrics" in l]
    for l in lines:
        print("  " + l)
    check("profiled program ran", run.returncode == 0, f"exit {run.returncode}; stderr tail: {run.stderr[-400:]!r}")
    query = subprocess.run([args.strata, "gpu", "sql", "SELECT correlation, kernel, passes, sm_throughput_pct, "
                            "dram_throughput_pct, achieved_occupancy_pct, duration_ns, error, result FROM kernel_metrics "
                            "ORDER BY id", "--json", store], capture_output=True, text=True, timeout=60)
    if query.returncode != 0:
        check("kernel_metrics rows", False, query.stderr.strip())
        return 1
    body = json.loads(query.stdout)
    rows = [dict(zip(body["columns"], r)) for r in body["rows"]]
    for r in rows:
        print("  row: " + json.dumps(r))
    measured = [r for r in rows if r["error"] is None]
    refused = [r for r in rows if r["error"] is not None]
    if measured:
        check("two launches of vector_add measured", len(measured) == 2 and all("vector_add" in r["kernel"] for r in measured),
              f"{len(measured)} measured")
        check("metrics in range", all(r["sm_throughput_pct"] is not None and 0 <= r["sm_throughput_pct"] <= 100 and
                                      r["achieved_occupancy_pct"] is not None and r["duration_ns"] for r in measured),
              json.dumps(measured))
    elif refused:
        reason = refused[0]["error"]
        say("PASS", "profiling refused, with the reason", reason)
        if refused[0]["result"] == 35:
            check("the missing permission is named", "NVreg_RestrictProfilingToAdminUsers" in reason, reason)
    else:
        check("an answer to the profile request", False, "no kernel_metrics row and no message: " + " | ".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
