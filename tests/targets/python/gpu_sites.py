"""Debuggee of the launch-site tests run on every CPython 3.10+ the build found (shared and
statically linked): the collector named by CUDA_INJECTION64_PATH (its test build) called the way
CUDA calls it when a program launches, from Python lines with the GIL released (ctypes' CDLL, as
PyTorch's ops release it) and held (PyDLL), from a Python thread, from a C thread with no Python
frame, and from one while a Python thread waits in a scope (what the collector's autograd
wrapper makes of backward()). No GPU is needed."""
import ctypes
import os
import threading

path = os.environ["CUDA_INJECTION64_PATH"]
released, held = ctypes.CDLL(path), ctypes.PyDLL(path)
for lib in (released, held):
    for entry in (lib.strata_gpu_test_launches, lib.strata_gpu_test_launches_from_thread):
        entry.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
        entry.restype = ctypes.c_int
held.strata_gpu_scope_enter.argtypes = [ctypes.c_int, ctypes.c_int]
held.strata_gpu_scope_leave.argtypes = [ctypes.c_int]


def without_gil():
    return released.strata_gpu_test_launches(None, b"_Z7releasev", 2)  # @bp:released


def with_gil():
    return held.strata_gpu_test_launches(None, b"_Z4heldv", 2)  # @bp:held


def in_a_thread():
    done = []
    t = threading.Thread(target=lambda: done.append(released.strata_gpu_test_launches(None, b"_Z6threadv", 2)))  # @bp:thread
    t.start()
    t.join()
    return done[0]


def backward():
    # As the collector's wrapper around torch's autograd engine: this thread waits (its frames
    # but this one) while a thread with no Python frame launches.
    scope = held.strata_gpu_scope_enter(1, 1)
    try:
        return released.strata_gpu_test_launches_from_thread(None, b"_Z8backwardv", 2)
    finally:
        held.strata_gpu_scope_leave(scope)


made = without_gil() + with_gil() + in_a_thread()
made += backward()  # @bp:backward
made += released.strata_gpu_test_launches_from_thread(None, b"_Z6nativev", 2)  # @bp:native
print(f"launched {made}", flush=True)
