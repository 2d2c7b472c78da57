"""Example of a long-running program to attach to by pid: fits y = 3x + 2 with plain-Python
gradient descent, one small step every 20 ms, for --seconds (default 60).

    python3 slow_train.py [--seconds S]

Prints "ready" once it trains, then the step and loss every 50 steps. `strata attach --break
train_loop.py:LINE PID` (its train_step, which this program runs) brings the debugger in without
a restart, prints one stop and lets it go: the program trains on as before.
"""
import argparse
import random
import time

from train_loop import train_step  # the step of train_loop.py, beside this file


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    rng = random.Random(0)
    w, b, step = 0.0, 0.0, 0
    end = time.monotonic() + args.seconds
    print("ready", flush=True)
    while time.monotonic() < end:
        batch = [(x, 3 * x + 2) for x in (rng.uniform(-1, 1) for _ in range(8))]
        w, b, loss = train_step(w, b, batch, lr=0.05)
        step += 1
        if step % 50 == 0:
            print(f"step {step}: loss={loss:.5f} w={w:.3f} b={b:.3f}", flush=True)
        time.sleep(0.02)


if __name__ == "__main__":
    main()
