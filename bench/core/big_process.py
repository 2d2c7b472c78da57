"""Workload for open_core.py: a CPython process with MB megabytes of written memory (so a core
holds them) and 8 threads parked a few Python calls deep; prints "ready" and waits."""
import sys
import threading
import time

MB = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
# Written, not just allocated: every page is in the process's anonymous memory, so in its core.
ballast = [bytearray(b"\x5a" * (1 << 20)) for _ in range(MB)]


def park(depth, ready):
    if depth:
        return park(depth - 1, ready)
    ready.release()
    time.sleep(1e6)


def main():
    ready = threading.Semaphore(0)
    for i in range(8):
        threading.Thread(target=park, args=(10 + i, ready), name=f"worker-{i}", daemon=True).start()
    for _ in range(8):
        ready.acquire()
    print("ready", flush=True)
    time.sleep(1e6)


main()
