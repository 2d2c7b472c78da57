# Threads parked at known lines for `strata stacks`: a sleep, a lock wait, a generator, a
# coroutine, a 1000-deep recursion, a sorted() key callback; then the main thread sticks in C
# holding the GIL (ctypes.PyDLL does not release it). `--worker` runs a child that sleeps;
# `--children N` starts N of them first. Prints "ready" when everything is parked.
import asyncio
import ctypes
import os
import subprocess
import sys
import threading
import time

parked = []
lock = threading.Lock()
lock.acquire()
forever = threading.Event()


def park(tag):
    done = threading.Event()
    parked.append(done)
    return done


def sleeper(done):
    done.set()
    time.sleep(100000)  # @bp:sleeper


def lock_waiter(done):
    done.set()
    lock.acquire()  # @bp:lock_wait


def numbers(done):
    count = 7
    label = "gen"
    done.set()
    forever.wait()  # @bp:generator
    yield count


def generator_user(done):
    for n in numbers(done):  # @bp:generator_caller
        print(n)


async def coroutine(done):
    ratio = 2.5
    done.set()
    forever.wait()  # @bp:coroutine
    return ratio


def coroutine_user(done):
    asyncio.run(coroutine(done))  # @bp:coroutine_caller


def recurse(depth, done):
    if depth == 0:
        done.set()
        forever.wait()  # @bp:recursion_bottom
        return 0
    return recurse(depth - 1, done) + 1  # @bp:recursion


def key_of(item, done):
    if item == 2:
        done.set()
        forever.wait()  # @bp:sort_key
    return item


def sorter(done):
    sorted([3, 2, 1], key=lambda item: key_of(item, done))  # @bp:sort_call


def worker_main():
    print("ready", flush=True)
    time.sleep(100000)  # @bp:worker_sleep


def stuck_in_c():
    libc = ctypes.PyDLL(None)
    message = "holding"
    libc.sleep(100000)  # @bp:stuck


def main():
    if "--worker" in sys.argv:
        worker_main()
        return
    children = []
    if "--children" in sys.argv:
        count = int(sys.argv[sys.argv.index("--children") + 1])
        for _ in range(count):
            child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], stdout=subprocess.PIPE)
            child.stdout.readline()
            children.append(child)
    jobs = [("sleeper", sleeper), ("lock-waiter", lock_waiter), ("generator", generator_user),
            ("coroutine", coroutine_user), ("recursion", lambda d: recurse(1000, d)), ("sorter", sorter)]
    sys.setrecursionlimit(5000)
    for name, job in jobs:
        threading.Thread(target=job, args=(park(name),), name=name, daemon=True).start()
    for done in parked:
        done.wait()
    # Each thread set its event just before its blocking call: give them the moment to get there.
    time.sleep(0.5)
    print("ready", flush=True)
    if "--no-stuck" in sys.argv:
        sys.stdin.readline()
        return
    stuck_in_c()  # @bp:stuck_call


main()
