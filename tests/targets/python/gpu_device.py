"""Debuggee of the live occupancy test: a stand-in for the CUDA driver's device queries is
loaded first (FAKE_LIBCUDA: it answers an H100's properties), then the collector named by
CUDA_INJECTION64_PATH (its test build) makes launches; the collector describes the device the
kernels ran on from the driver it finds loaded. No GPU is needed."""
import ctypes
import os

ctypes.CDLL(os.environ["FAKE_LIBCUDA"], mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
lib.strata_gpu_test_launches.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
print("launched", lib.strata_gpu_test_launches(None, b"_Z6vecAddPKfS0_Pfi", 4), flush=True)
