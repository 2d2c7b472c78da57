"""Debuggee of the live GPU collection tests. Loads the collector CUDA_INJECTION64_PATH names,
as the CUDA driver loads it at cuInit (strata-dap sets the variable for a launch with "gpu"; the
tests name the test build of libstrata_cupti.so), then makes kernel launches from Python lines
through its test entry, which makes the CUPTI callbacks a launch makes and delivers the
kernels' records as CUPTI would. No GPU is needed. With the argument "crash" it then reads an
unmapped address through ctypes, as a bad pointer handed to a C extension would."""
import ctypes
import os
import sys

# CDLL releases the GIL around the call, as PyTorch does around every op it dispatches: the
# collector reads the launching thread's Python frames without it.
lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
lib.strata_gpu_test_launches.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
lib.strata_gpu_test_launches.restype = ctypes.c_int


def vector_add(n):
    return lib.strata_gpu_test_launches(None, b"_Z6vecAddPKfS0_Pfi", n)  # @bp:add_launch


def relu(n):
    return lib.strata_gpu_test_launches(None, b"_Z4reluPfi", n)  # @bp:relu_launch


made = vector_add(5)  # @bp:first
made += relu(3)  # @bp:second
print(f"launched {made}", flush=True)  # @bp:after
if sys.argv[1:] == ["crash"]:
    ctypes.string_at(0x1000, 16)  # @bp:crash
