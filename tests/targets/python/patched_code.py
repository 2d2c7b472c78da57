"""Debuggee: breakpoints written into 3.11 code (never-called functions, closures made before
the breakpoint, a module loaded before and one loaded after, a generator, a running loop)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import late_helper  # noqa: E402  (loaded before any breakpoint is set when run with --wait)


def never_called():
    return 0  # @bp:never


def work(i):
    total = i * 2  # @bp:work
    return total


def make_adder(n):
    def add(k):
        return k + n  # @bp:closure
    return add


def gen(n):
    for i in range(n):
        yield i  # @bp:gen_yield
        got = i + 1  # @bp:gen_after
        del got


def core_state():
    """What the agent's core does now on 3.11: the frame hook and the tracing of every thread."""
    try:
        from strata import _strata_core as core
    except ImportError:
        return "no core"
    if not hasattr(core, "trace_hooked"):
        return "no tracing"
    return f"hooked={core.trace_hooked()} everywhere={core.trace_everywhere()}"


def main(mode):
    adder = make_adder(10)
    orig = late_helper.helper.__code__
    if mode == "wait":
        # Breakpoints are set while this runs: wait for the test's go-ahead.
        flag = sys.argv[2]
        open(flag + ".ready", "w").close()
        while not os.path.exists(flag):
            time.sleep(0.02)
    print("state", core_state(), flush=True)
    acc = 0
    for i in range(6):
        acc += work(i)  # @bp:loop
    acc += adder(1)
    acc += sum(gen(3))
    acc += late_helper.helper(4)
    import later_helper
    acc += later_helper.later(5)
    print("restored", late_helper.helper.__code__ is orig, flush=True)
    print("acc", acc, flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "run")
