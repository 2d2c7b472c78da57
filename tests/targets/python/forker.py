"""Debuggee: forked children (os.fork, then a multiprocessing pool with fork) run through a
breakpoint line and must not block on it."""
import multiprocessing
import os
import sys


def work(tag):
    return tag * 2  # @bp:work


if __name__ == "__main__":
    pid = os.fork()
    if pid == 0:
        work(1)
        os._exit(7)
    _, status = os.waitpid(pid, 0)
    print("child exit", os.waitstatus_to_exitcode(status), flush=True)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        print("pool", pool.map(work, [3, 4, 5]), flush=True)
    work(2)
    sys.exit(0)
