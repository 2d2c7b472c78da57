"""Starts a training script's ranks the way torchrun does, for Debian's torch 1.13 whose torchrun
fails under Python 3.11: each rank a child process with RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT set; waits for them and exits with the first failure.

  python3 torchrun_like.py --nproc_per_node N [--master_port P] script.py [args...]
"""
import os
import subprocess
import sys


def main(argv):
    n, port = 1, 29500
    while argv and argv[0].startswith("--"):
        if argv[0] == "--nproc_per_node":
            n = int(argv[1])
        elif argv[0] == "--master_port":
            port = int(argv[1])
        else:
            sys.exit(f"unknown option {argv[0]}")
        argv = argv[2:]
    procs = []
    for rank in range(n):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable] + argv, env=env))
    codes = [p.wait() for p in procs]
    return next((c for c in codes if c), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
