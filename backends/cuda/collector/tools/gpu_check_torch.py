"""The GPU check's PyTorch part: the training loop and a CUDA graph run through `strata gpu run
--stacks`, then read back with `strata gpu sql`. What must show: at least 95 % of the loop's
kernels tied to a marked line of train_torch.py, the backward kernels (launched by autograd's
engine threads, which have no Python frame) to the `loss.backward()` line, and a graph replay's
kernels to the line that captured them and the line that replayed them. Prints PASS/FAIL/SKIP
lines; exits 1 when a check failed.

  python3 gpu_check_torch.py --strata DIR/bin/strata --train DIR/train_torch.py [--python python3] [--work DIR]
"""
import json
import os
import subprocess
import sys

import check_report
from check_report import arguments, check, marker_line, say, torch_missing

GRAPH_PROGRAM = '''import torch
x = torch.arange(4096, device="cuda", dtype=torch.float32)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        y = x * 2 + 1  # warm-up on a side stream, as torch.cuda.graph's docs do
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    y = x * 2 + 1  # @graph:capture
for _ in range(20):
    graph.replay()  # @graph:replay
torch.cuda.synchronize()
print("graph_torch: replayed 20 times, y[1] =", float(y[1]))
'''


def sql(args, store, query):
    done = subprocess.run([args.strata, "gpu", "sql", query, "--json", store], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"strata gpu sql: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)["rows"]


def run(args, store, program, extra=()):
    return subprocess.run([args.strata, "gpu", "run", "--stacks", "--store", store, "--", args.python, program, *extra],
                          capture_output=True, text=True, timeout=90)


# Per kernel: its site's innermost Python frame in FILE (line), and the site's attribution.
def kernel_lines(args, store, file_suffix):
    return sql(args, store, f"""
        WITH k AS MATERIALIZED (SELECT pid, site FROM kernels),
             f AS MATERIALIZED (SELECT pid, site, line, min(depth) FROM site_frames
                                WHERE kind = 'python' AND file LIKE '%{file_suffix}' GROUP BY pid, site)
        SELECT f.line, s.attribution, count(*) FROM k
          LEFT JOIN f ON f.pid = k.pid AND f.site = k.site
          LEFT JOIN launch_sites s ON s.pid = k.pid AND s.id = k.site
        GROUP BY f.line, s.attribution ORDER BY 3 DESC""")


def check_loop(args, work):
    store = os.path.join(work, "train.strata")
    done = run(args, store, args.train, ("--steps", "100"))
    if done.returncode != 0 or "steps on cuda" not in done.stdout:
        say("FAIL", "torch loop ran on the GPU", f"exit {done.returncode}: {done.stderr.strip()[-800:]}")
        return
    say("PASS", "torch loop ran on the GPU", next(l for l in done.stdout.splitlines() if "steps on cuda" in l))
    marked = {marker_line(args.train, "# @gpu:" + m): m for m in ("truth", "data", "target", "forward", "backward", "step")}
    rows = kernel_lines(args, store, os.path.basename(args.train))
    total = sum(r[2] for r in rows)
    on_marked = sum(r[2] for r in rows if r[0] in marked)
    table = ", ".join(f"{marked.get(r[0], r[0])}/{r[1]}: {r[2]}" for r in rows)
    check("torch kernels recorded", total > 0, f"{total} kernels")
    check("torch: >= 95 % of the loop's kernels on a marked line", total > 0 and on_marked >= 0.95 * total,
          f"{on_marked} of {total} ({100.0 * on_marked / max(total, 1):.1f} %): {table}")
    backward = marker_line(args.train, "# @gpu:backward")
    caller = [r for r in rows if r[1] == "caller"]
    check("torch: backward kernels (autograd's threads) on the backward() line",
          bool(caller) and all(r[0] == backward for r in caller),
          f"{sum(r[2] for r in caller)} kernels launched for a waiting thread: " +
          ", ".join(f"line {r[0]}: {r[2]}" for r in caller) + f" (backward() is line {backward})")


def check_graph(args, work):
    program = os.path.join(work, "graph_torch.py")
    with open(program, "w") as f:
        f.write(GRAPH_PROGRAM)
    store = os.path.join(work, "graph.strata")
    done = run(args, store, program)
    if done.returncode != 0:
        say("FAIL", "CUDA graph replay", f"exit {done.returncode}: {done.stderr.strip()[-800:]}")
        return
    capture, replay = marker_line(program, "# @graph:capture"), marker_line(program, "# @graph:replay")
    rows = sql(args, store, """
        WITH k AS MATERIALIZED (SELECT pid, site, graph_node_id FROM kernels WHERE graph_node_id != 0)
        SELECT (SELECT line FROM site_frames f WHERE f.pid = k.pid AND f.site = g.site AND f.kind = 'python'
                  AND f.file LIKE '%graph_torch.py' ORDER BY depth LIMIT 1),
               (SELECT line FROM site_frames f WHERE f.pid = k.pid AND f.site = k.site AND f.kind = 'python'
                  AND f.file LIKE '%graph_torch.py' ORDER BY depth LIMIT 1),
               count(*)
        FROM k LEFT JOIN graph_nodes g ON g.pid = k.pid AND g.node = k.graph_node_id GROUP BY 1, 2""")
    total = sum(r[2] for r in rows)
    check("CUDA graph replay: kernels tied to the capture line and the replay line",
          total >= 20 and all(r[0] == capture and r[1] == replay for r in rows),
          f"{total} replayed kernels; (capture line, replay line, count): {rows} (marked: {capture}, {replay})")


def main():
    args = arguments(("strata", "train"), "strata-gpu-torch-")
    missing = torch_missing(args.python)
    if missing:
        say("SKIP", "torch checks", missing)
        return 0
    for step in (check_loop, check_graph):
        try:
            step(args, args.work)
        except Exception as e:  # noqa: BLE001 - reported, the other checks go on
            say("FAIL", step.__name__, f"{type(e).__name__}: {e}")
    return 1 if check_report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
