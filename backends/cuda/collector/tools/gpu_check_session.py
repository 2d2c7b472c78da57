"""The GPU check's collection driven by debug sessions, through strata-dap over DAP on stdio:
launches with "gpu" (the adapter injects the collector it finds beside itself), the GPU requests
at a stop and after the end, late start and stop through the Python agent. Prints
PASS/FAIL/SKIP lines; exits 1 when a check failed.

  python3 gpu_check_session.py --dap DIR/bin/strata-dap --examples DIR/examples \
      --sources DIR/examples-src --train DIR/train_torch.py [--python python3]

The Python cases need the agent package (STRATA_AGENT_PYTHONPATH) and torch with CUDA.
"""
import os
import sys

import check_report
from check_report import arguments, check, marker_line, say, session_checks, torch_missing
from gpu_check_error_stop import Dap

LAUNCHES = 10  # vector_add's launches (its argument)


def start(dap_path, launch, breakpoints=None):
    """initialize, launch, breakpoints ({path: [line]}), configurationDone; the client and
    the verified lines."""
    c = Dap(dap_path)
    c.request("initialize", adapterID="strata", linesStartAt1=True, columnsStartAt1=True, pathFormat="path")
    c.request("launch", **launch)
    c.event("initialized")
    verified = []
    for path, lines in (breakpoints or {}).items():
        r = c.request("setBreakpoints", source={"path": path}, breakpoints=[{"line": line} for line in lines])
        verified += [b.get("line") for b in r["breakpoints"] if b.get("verified")]
    c.request("configurationDone")
    return c, verified


def stop_or_exit(c, timeout):
    """The next `stopped` or `exited` event: (name, body)."""
    while True:
        for e in c.events:
            if e["event"] in ("stopped", "exited"):
                c.events.remove(e)
                return e["event"], e.get("body") or {}
        c._next(timeout)


def kernels_of(c):
    return {k["name"]: k["count"] for k in c.request("gpuSummary", limit=50)["kernels"]}


def kernel_of_first(c, name_part):
    """gpuKernel of the first timeline item whose name contains name_part."""
    items = c.request("gpuTimeline", maxItems=2000)["items"]
    item = next((i for i in items if i.get("kind") == "kernel" and name_part in i.get("name", "")), None)
    return c.request("gpuKernel", id=item["id"]) if item else {}


def first_user_frame(kernel):
    """The first launch frame that is neither subtle nor a label: the user's own line."""
    return next((f for f in kernel.get("stackFrames", []) if f.get("presentationHint") not in ("subtle", "label")), {})


def check_native(args):
    source = os.path.join(args.sources, "vector_add.cu")
    launch_line = marker_line(source, "// @launch:vector_add")
    stop_line = marker_line(source, "// @copy:c")
    name = "native session"

    def checks(c, verified):
        if verified:
            what, stopped = stop_or_exit(c, 90)
            if what == "exited":
                raise RuntimeError(f"the program exited ({stopped.get('exitCode')}) before the breakpoint: {c.output()[-400:]}")
            seen = kernels_of(c).get("vector_add(float const*, float const*, float*, int)", 0)
            # A ptrace stop cannot be answered by the collector: up to one flush period may still be in CUPTI.
            check(f"{name}: kernels in gpuSummary at a breakpoint after the launches", seen > 0,
                  f"{seen} of {LAUNCHES} at line {stop_line} ({stopped.get('reason')})")
            c.request("setBreakpoints", source={"path": source}, breakpoints=[])
            c.request("continue", threadId=stopped["threadId"])
        else:
            say("SKIP", f"{name}: a breakpoint in vector_add.cu", "the example has no line table (built without -g)")
        exited = c.event("exited", timeout=90)
        c.event("terminated", timeout=30)
        kernels = kernels_of(c)
        check(f"{name}: program ran", exited.get("exitCode") == 0, f"exit {exited.get('exitCode')}")
        count = kernels.get("vector_add(float const*, float const*, float*, int)", 0)
        check(f"{name}: kernel count equals the launches", count == LAUNCHES, f"{count} recorded, {LAUNCHES} launched; {kernels}")
        kernel = kernel_of_first(c, "vector_add")
        top = first_user_frame(kernel)
        shown = [(f.get("name"), f.get("line"), f.get("presentationHint")) for f in kernel.get("stackFrames", [])[:4]]
        check(f"{name}: gpuKernel's first frame that is not subtle is main at the launching line",
              top.get("name") == "main" and top.get("line") == launch_line and
              (top.get("source") or {}).get("path", "").endswith("vector_add.cu"), f"{shown} (marked: {launch_line})")
        check(f"{name}: gpuKernel has an occupancy estimate (the collector recorded the device)", "occupancy" in kernel,
              kernel.get("occupancyUnavailable", "occupancy present"))
        important = [e["body"]["output"] for e in c.events if e["event"] == "output" and e["body"].get("category") == "important"]
        check(f"{name}: no problem reported", not important, "".join(important)[:400])

    launch = {"program": os.path.join(args.examples, "vector_add"), "args": [str(LAUNCHES)], "gpu": "stacks"}
    session_checks(name, lambda: start(args.dap, launch, {source: [stop_line]}), checks)


def train_launch(args, gpu):
    """The launch of train_torch.py, 100 steps under args.python, with GPU collection `gpu`."""
    return {"program": args.train, "python": args.python, "args": ["--steps", "100"], "gpu": gpu}


def marked_lines(path):
    with open(path) as f:
        return {i for i, line in enumerate(f, 1) if "# @gpu:" in line}


def check_torch(args):
    name = "torch session"
    step_line = marker_line(args.train, "# @gpu:step")
    marked = marked_lines(args.train)

    def checks(c, verified):
        stopped = c.event("stopped", timeout=120)
        kernels = kernels_of(c)
        check(f"{name}: kernels at the first breakpoint", sum(kernels.values()) > 0, f"{sum(kernels.values())} kernels")
        items = [i for i in c.request("gpuTimeline", maxItems=2000)["items"] if i.get("kind") == "kernel"]
        tops, backward = [], []
        backward_line = marker_line(args.train, "# @gpu:backward")
        for item in items[:60]:
            kernel = c.request("gpuKernel", id=item["id"])
            top = first_user_frame(kernel)
            tops.append(((top.get("source") or {}).get("path"), top.get("line")))
            if kernel.get("attribution") == "caller":
                backward.append(tops[-1])
        check(f"{name}: gpuKernel's first frame that is not subtle is a marked line of train_torch.py",
              bool(tops) and all(p == args.train and l in marked for p, l in tops),
              f"{sorted(set(tops), key=str)[:8]} (marked: {sorted(marked)})")
        check(f"{name}: backward kernels' first frame that is not subtle is the backward() line",
              bool(backward) and all(p == args.train and l == backward_line for p, l in backward),
              f"{len(backward)} of {len(tops)} kernels launched for the waiting thread: {sorted(set(backward), key=str)[:4]} "
              f"(backward(): {backward_line})")
        c.request("setBreakpoints", source={"path": args.train}, breakpoints=[])
        c.request("continue", threadId=stopped["threadId"])
        exited = c.event("exited", timeout=150)
        check(f"{name}: trains on the GPU to the end", exited.get("exitCode") == 0 and "steps on cuda" in c.output(),
              f"exit {exited.get('exitCode')}")

    session_checks(name, lambda: start(args.dap, train_launch(args, "stacks"), {args.train: [step_line]}), checks)


def check_late(args):
    name = "late start"
    line = marker_line(args.train, "# @gpu:forward")

    def checks(c, verified):
        stopped = c.event("stopped", timeout=120)
        before = sum(kernels_of(c).values())
        check(f"{name}: mode off records nothing", before == 0, f"{before} kernels")
        c.request("evaluate", expression="!gpu start stacks", context="repl")
        c.request("continue", threadId=stopped["threadId"])
        stopped = c.event("stopped", timeout=60)
        after = sum(kernels_of(c).values())
        check(f"{name}: !gpu start collects from the next step on", after > 0, f"{after} kernels after one step")
        c.request("evaluate", expression="!gpu stop", context="repl")
        stopped_at = sum(kernels_of(c).values())
        c.request("setBreakpoints", source={"path": args.train}, breakpoints=[])
        c.request("continue", threadId=stopped["threadId"])
        exited = c.event("exited", timeout=150)
        c.event("terminated", timeout=30)
        final = sum(kernels_of(c).values())
        check(f"{name}: !gpu stop ends collection, the program goes on", exited.get("exitCode") == 0 and final == stopped_at,
              f"exit {exited.get('exitCode')}, {stopped_at} kernels at the stop, {final} at the end")

    session_checks(name, lambda: start(args.dap, train_launch(args, "off"), {args.train: [line]}), checks)


def main():
    args = arguments(("dap", "examples", "sources", "train"))
    check_native(args)
    missing = torch_missing(args.python, agent=True)
    if missing:
        say("SKIP", "torch sessions", missing)
    else:
        check_torch(args)
        check_late(args)
    return 1 if check_report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
