"""Debuggee of the CUDA error stop tests. Loads the collector CUDA_INJECTION64_PATH names, as
the CUDA driver loads it at cuInit (the test names the test build of libstrata_cupti.so, whose
extra entry makes the CUPTI callbacks a kernel launch and a failing cudaDeviceSynchronize
make), then calls that entry from a Python line, without the GIL (ctypes lets it go, as torch
does around a synchronize). `thread` makes the call from a second thread. No GPU is needed."""
import ctypes
import os
import shutil
import sys
import tempfile
import threading

lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
lib.strata_gpu_test_sticky_error.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
lib.strata_gpu_test_sticky_error.restype = ctypes.c_int
ring_dir = tempfile.mkdtemp(prefix="strata-cuda-error-")


def synchronize():
    """Stands in for torch.cuda.synchronize() after an out-of-bounds kernel."""
    config = f"mode=trace dir={ring_dir}".encode()
    return lib.strata_gpu_test_sticky_error(config, b"_Z4fillPii", 700)  # @bp:sync


def work(results):
    results.append(synchronize())  # @bp:work


results = []
if sys.argv[1:] == ["thread"]:
    worker = threading.Thread(target=work, args=(results,), name="cuda-worker")
    worker.start()
    worker.join()
else:
    work(results)  # @bp:main_call
print(f"after the error: {results[0]}", flush=True)
shutil.rmtree(ring_dir, ignore_errors=True)
