"""Debuggee for the adapter's Python session tests: breakpoints, stepping, variables, threads."""
import threading
import time


def add(a, b):
    s = a + b  # @bp:add_body
    return s  # @bp:add_return


def depth(n):
    if n == 0:
        return add(n, 1)  # @bp:deepest
    return depth(n - 1)


def compute(n):
    big = list(range(n))
    label = "items"
    total = add(len(big), 1)  # @bp:compute_call
    return total + len(label)  # @bp:compute_return


def worker(stop):
    while not stop.is_set():
        time.sleep(0.01)


def main():
    stop = threading.Event()
    t = threading.Thread(target=worker, args=(stop,), name="worker-1")
    t.start()
    result = compute(1000)
    depth(12)
    for i in range(6):
        result += i  # @bp:loop
    stop.set()
    t.join()
    print("result", result)  # @bp:print


if __name__ == "__main__":
    main()
