"""Debuggee: a tight loop that only a pause can stop (it gives up after 60 s)."""
import time

deadline = time.monotonic() + 60
n = 0
print("looping", flush=True)
while time.monotonic() < deadline:
    n += 1  # @bp:busy
print("gave up", n)
