"""Debuggee: a busy worker, a sleeping worker and the main thread waiting."""
import threading
import time

stop = False


def busy():
    n = 0
    while not stop: n += 1  # @bp:busy


def sleeper():
    while not stop:
        time.sleep(0.2)  # @bp:sleeper


a = threading.Thread(target=busy, name="busy-worker")
b = threading.Thread(target=sleeper, name="sleepy-worker")
a.start()
b.start()
time.sleep(0.3)
print("ready", flush=True)
deadline = time.time() + 20
while time.time() < deadline and not stop:
    time.sleep(0.05)  # @bp:main_wait
a.join()
b.join()
