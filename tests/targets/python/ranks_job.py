"""A job of N rank processes for attach {"processTree"} and {"processIds"}: the launcher starts
each rank as `python ranks_job.py --rank R` with RANK=R, and watches them; each rank works in a
loop until it is killed (or for --steps N), printing its step now and then. With CRASH_RANK=R
in the environment, rank R reads an unmapped address through ctypes at its step 20."""
import ctypes
import os
import subprocess
import sys
import time


def work(rank, step):
    total = rank * 1000 + step  # ranks: work_line
    return total


def rank_main(rank, steps=None):
    print(f"rank {rank} ready", flush=True)
    step = 0
    while steps is None or step < steps:
        work(rank, step)
        step += 1
        if step == 20 and os.environ.get("CRASH_RANK") == str(rank):
            ctypes.string_at(0x1000 + rank, 8)  # ranks: crash_line
        if step % 50 == 0:
            print(f"rank {rank} step {step}", flush=True)
        time.sleep(0.01)
    print(f"rank {rank} done after {step} steps", flush=True)


def launcher(n, first=0):
    procs = [subprocess.Popen([sys.executable, __file__, "--rank", str(r)], env=dict(os.environ, RANK=str(r)))
             for r in range(first, first + n)]
    while any(p.poll() is None for p in procs):
        time.sleep(0.05)  # ranks: launcher_line


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rank"]:
        rank_main(int(sys.argv[2]), int(sys.argv[4]) if sys.argv[3:4] == ["--steps"] else None)
    else:
        launcher(int(sys.argv[2]) if sys.argv[1:2] == ["--ranks"] else 3,
                 int(sys.argv[4]) if sys.argv[3:4] == ["--first-rank"] else 0)
