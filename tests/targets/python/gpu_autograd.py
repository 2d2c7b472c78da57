"""Debuggee of the launch-site tests with PyTorch's autograd (Debian's torch 1.13, on the CPU):
the collector named by CUDA_INJECTION64_PATH (the test build of libstrata_cupti.so) is called
the way CUDA calls it when PyTorch launches: from a Python op with the GIL released (ctypes'
CDLL, as torch's bindings release it), and from a C++ thread with no Python frame while the
thread that called backward() waits in the autograd engine (on a GPU, autograd's device threads
launch the backward kernels). Then a CUDA graph captured on one line and replayed on another.
No GPU is needed."""
import ctypes
import os

import torch

lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
for entry in (lib.strata_gpu_test_launches, lib.strata_gpu_test_launches_from_thread):
    entry.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    entry.restype = ctypes.c_int
lib.strata_gpu_test_graph_capture.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
lib.strata_gpu_test_graph_replay.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        lib.strata_gpu_test_launches(None, b"_Z9scale_fwdPf", 1)  # @bp:in_forward
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        lib.strata_gpu_test_launches_from_thread(None, b"_Z9scale_bwdPf", 2)
        return grad * 2


def main():
    x = torch.ones(4, requires_grad=True)
    for _ in range(3):
        y = Scale.apply(x).sum()  # @bp:forward
        y.backward()  # @bp:backward
    lib.strata_gpu_test_graph_capture(None, b"_Z5graphPf")  # @bp:capture
    replayed = lib.strata_gpu_test_graph_replay(None, b"_Z5graphPf", 5)  # @bp:replay
    print(f"autograd done, grad {x.grad.tolist()}, {replayed} replays", flush=True)  # @bp:after


main()
