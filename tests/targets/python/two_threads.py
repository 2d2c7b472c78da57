"""Debuggee: two threads reach the same breakpoint at about the same time."""
import threading


def work(tag):
    value = tag * 10  # @bp:shared
    return value


threads = [threading.Thread(target=work, args=(k,), name=f"worker-{k}") for k in (1, 2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("both done", flush=True)
