"""Debuggee: the only thread spends nearly all its time asleep in C."""
import time

print("ready", flush=True)
n = 0
while n < 100:
    time.sleep(1.5)  # @bp:sleep
    n += 1  # @bp:after_sleep
print("slept", n, flush=True)
