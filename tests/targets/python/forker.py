"""Debuggee: a forked child runs through a breakpoint line and must not block on it."""
import os
import sys


def work(tag):
    return tag * 2  # @bp:work


pid = os.fork()
if pid == 0:
    work(1)
    os._exit(7)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status), flush=True)
work(2)
sys.exit(0)
