# The target of bench/stacks/side_by_side.py: N threads, each DEPTH Python frames deep, waiting.
import sys
import threading

threads, depth = int(sys.argv[1]), int(sys.argv[2])
stop = threading.Event()
started = threading.Barrier(threads + 1)


def dive(n):
    if n == 0:
        started.wait()
        stop.wait()
        return 0
    return dive(n - 1) + 1


for i in range(threads):
    threading.Thread(target=dive, args=(depth - 2,), name=f"diver-{i}", daemon=True).start()
started.wait()
print("ready", flush=True)
stop.wait()
