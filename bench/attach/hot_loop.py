"""The attach bench's debuggee: a hot loop that prints its rate (iterations per second) every
REPORT iterations, started plainly; the debugger attaches to it by pid."""
import sys
import time

REPORT = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000


def hot(i):
    return i + 1  # @bp:hot


print("ready", flush=True)
count = 0
start = time.perf_counter()
while True:
    count = hot(count)
    if count % REPORT == 0:
        now = time.perf_counter()
        print("rate %.0f" % (REPORT / (now - start)), flush=True)
        start = now
