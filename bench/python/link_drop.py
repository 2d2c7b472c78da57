"""The Python agent when its client's link drops while the program is stopped at a breakpoint:
how long until the program runs on (the link closed → the program's next line of output), and
until a new client is answered. The tests check that it runs on and listens again
(tests/python/test_lifecycle.py, tests/e2e/python_attach.test.mjs); the time is measured here.

    PYTHONPATH=build/release/backends/python/python python3.12 bench/python/link_drop.py [--runs 20]

Prints a Markdown table: min / median / max in ms over --runs runs, and the load average."""
import argparse
import os
import socket
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))
from bench_dap import loadavg  # noqa: E402
from dap_client import AgentProcess, DapClient  # noqa: E402

# Ticks every millisecond: the resolution of "runs on".
PROGRAM = """import time
i = 0
while i < 200000:
    i += 1  # the breakpoint
    print("tick", i, flush=True)
    time.sleep(0.001)
"""


def one_run(path, line):
    agent = AgentProcess([path])
    try:
        lines = []
        cv = threading.Condition()

        def read():
            for raw in agent.proc.stdout:
                with cv:
                    lines.append(time.monotonic())
                    cv.notify_all()
        threading.Thread(target=read, daemon=True).start()
        c = agent.client()
        c.request("setBreakpoints", source={"path": path}, breakpoints=[{"line": line, "condition": "i == 3"}])
        c.request("configurationDone")
        c.wait_event("stopped", 30)
        with cv:
            seen = len(lines)
        t0 = time.monotonic()
        c.sock.shutdown(socket.SHUT_RDWR)
        c.close()
        with cv:
            if not cv.wait_for(lambda: len(lines) > seen, 30):
                raise RuntimeError("the program did not run on within 30 s")
            resumed = lines[seen] - t0
        t1 = time.monotonic()
        c2 = DapClient.connect(agent.port, timeout=30)
        try:
            c2.request("initialize", adapterID="strata", timeout=30)
            answered = time.monotonic() - t1
        finally:
            c2.close()
        return resumed * 1000, answered * 1000
    finally:
        agent.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="strata-link-drop-")
    path = os.path.join(d, "ticks.py")
    with open(path, "w") as f:
        f.write(PROGRAM)
    line = PROGRAM.splitlines().index("    i += 1  # the breakpoint") + 1
    load_before = loadavg()
    results = [one_run(path, line) for _ in range(args.runs)]
    v = sys.version_info
    print(f"CPython {v[0]}.{v[1]}.{v[2]}, {args.runs} runs, load average {load_before} → {loadavg()}")
    print()
    print("| measurement | min | median | max |")
    print("| --- | ---: | ---: | ---: |")
    for i, name in enumerate(["link closed while stopped → the program's next output, ms",
                              "then a new client connects → `initialize` answered, ms"]):
        xs = [r[i] for r in results]
        print(f"| {name} | {min(xs):.2f} | {statistics.median(xs):.2f} | {max(xs):.2f} |")


if __name__ == "__main__":
    main()
