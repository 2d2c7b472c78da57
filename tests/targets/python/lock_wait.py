"""Debuggee for attach by pid: the main thread waits on a lock for argv[1] seconds (GIL free,
no Python code running anywhere), then says whether anything imported Strata's agent into it."""
import sys
import threading

print("ready", flush=True)
threading.Event().wait(float(sys.argv[1]) if len(sys.argv) > 1 else 60)  # @bp:wait
print("agent imported:", "strata" in sys.modules, flush=True)
