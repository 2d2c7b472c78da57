"""Debuggee for attach by pid: the main thread holds the GIL in C (libc's sleep called through
ctypes.PyDLL, which keeps the GIL) for argv[1] seconds, so no Python code can run meanwhile;
then says whether anything imported Strata's agent into it."""
import ctypes
import sys


def hold(seconds):
    ctypes.PyDLL(None).sleep(seconds)  # @bp:hold


print("ready", flush=True)
hold(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
print("agent imported:", "strata" in sys.modules, flush=True)
