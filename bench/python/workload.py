"""Benchmark debuggee: timed sections the agent benchmark drives; prints what it measured."""
import os
import sys
import time


def never_called():
    return 0  # @bp:never


def small(a, b):
    return a + b


def mixed(n):
    acc = 0
    for i in range(n):
        acc = small(acc, i) % 1000003
        if i % 7 == 0:
            acc += len(str(i))
    return acc


def hot(n):
    acc = 0
    for i in range(n):
        acc += i  # @bp:hot
    return acc


def first_line():
    pass


def stops(n, pause):
    big = list(range(100000))
    time.sleep(pause)
    for k in range(n):
        # CLOCK_REALTIME, the clock the client stamps the `stopped` event with on receipt.
        t_reached = time.time_ns()
        marker = k  # @bp:stop
    return big, t_reached, marker


def hit_count(n, pause):
    time.sleep(pause)
    acc = 0
    for i in range(n):
        t_reached = time.time_ns()
        acc += i  # @bp:hit
    return acc, t_reached


def report(text):
    """Prints what was measured, and appends it to $STRATA_BENCH_REPORT when set: a debugger
    that carries stdout as events must not be the way the bench learns the result."""
    print(text, flush=True)
    path = os.environ.get("STRATA_BENCH_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(text + "\n")


if sys.argv[1] == "bare-tool":
    # CPython's own cost of a global PY_START event: a bare tool whose callback returns
    # DISABLE, as the agent's does for code without breakpoints (compare with "never").
    sys.argv.pop(1)
    M = sys.monitoring
    M.use_tool_id(M.PROFILER_ID, "bare")
    M.register_callback(M.PROFILER_ID, M.events.PY_START, lambda code, offset: M.DISABLE)
    M.set_events(M.PROFILER_ID, M.events.PY_START)

mode = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 0
if mode == "start":
    report(f"first_line {time.time_ns()} {time.process_time()}")
    sys.exit(0)
# Process CPU time (every thread, the agent's included) is steadier than wall time on a
# shared machine, and is what the agent adds.
t0 = time.process_time()
if mode == "mixed":
    # The fastest of several passes: a burst of other work on a shared machine (which lands
    # in one pass or another) says nothing about the agent. Every pass runs under the agent
    # as the first did; only PY_START of each function costs anything, once.
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    best = None
    for _ in range(reps):
        t1 = time.process_time()
        mixed(n)
        t1 = time.process_time() - t1
        best = t1 if best is None else min(best, t1)
    report(f"elapsed {best}")
    sys.exit(0)
elif mode == "hot":
    hot(n)
elif mode == "stops":
    stops(n, float(sys.argv[3]))
elif mode == "hit":
    hit_count(n, float(sys.argv[3]))
report(f"elapsed {time.process_time() - t0}")
