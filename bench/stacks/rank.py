"""Benchmark debuggee: one "rank" of a job, waiting in a collective-like call a few frames deep
(rank 0 waits elsewhere, as a hung rank would). Prints `ready` once it waits."""
import os
import sys
import time


def all_reduce(step):
    print("ready", flush=True)
    while True:
        time.sleep(1)


def load_batch(step):
    print("ready", flush=True)
    while True:
        time.sleep(1)


def train_step(rank, step):
    if rank == 0:
        return load_batch(step)
    return all_reduce(step)


def main():
    train_step(int(os.environ.get("RANK", "0")), 3)


if __name__ == "__main__":
    sys.exit(main())
