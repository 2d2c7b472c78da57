"""Debuggee: ticks until told to stop (or for argv[1] ticks), printing each; then says whether
any tool still holds the debugger's sys.monitoring id."""
import sys
import time

stop = False
limit = int(sys.argv[1]) if len(sys.argv) > 1 else 400


def tick(i):
    return i * 2  # @bp:tick


i = 0
while not stop and i < limit:
    tick(i)
    print("tick", i, flush=True)
    i += 1
    time.sleep(0.02)
print("done", sys.monitoring.get_tool(sys.monitoring.DEBUGGER_ID), flush=True)
