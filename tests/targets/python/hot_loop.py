"""Debuggee for attach by pid: started plainly (no Strata), a loop already running when the
debugger comes in; prints its total so a debugged run can be compared with an undebugged one."""
import sys
import time


def step(i):
    return i * 3  # @bp:step


def main(n):
    total = 0
    print("ready", flush=True)
    for i in range(n):
        total += step(i)
        time.sleep(0.01)  # @bp:sleep
    print("total", total, flush=True)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 600)
