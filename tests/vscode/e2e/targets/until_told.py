"""Debuggee of the VS Code attach cases: started plainly (no Strata), it works round after round
until the file --until names exists, then prints its tag, its rounds and their total (a total
that only a run that went on after the debugger left can get right)."""
import os
import sys
import time


def work(i, total):
    total += i * 3  # @bp:work
    return total


def main(until, tag):
    rounds = total = 0
    print(f"{tag}: ready", flush=True)
    while not os.path.exists(until):
        total = work(rounds, total)
        rounds += 1
        time.sleep(0.02)  # @bp:sleep
    print(f"{tag}: finished after {rounds} rounds, total {total}", flush=True)


args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
main(args["--until"], args["--tag"])
