"""Benchmark debuggee: timed sections the agent benchmark drives; prints what it measured."""
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


def stops(n):
    import collections  # noqa: F401
    big = list(range(100000))
    for k in range(n):
        t_reached = time.monotonic()
        marker = k  # @bp:stop
    return big, t_reached, marker


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
    print(f"first_line {time.monotonic()} {time.process_time()}", flush=True)
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
    print(f"elapsed {best}", flush=True)
    sys.exit(0)
elif mode == "hot":
    hot(n)
elif mode == "stops":
    stops(n)
print(f"elapsed {time.process_time() - t0}", flush=True)
