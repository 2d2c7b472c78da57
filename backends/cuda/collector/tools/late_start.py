"""Late mode on a GPU: CUDA is already in use when the collector is loaded and started
(strata_gpu_start), then stopped (strata_gpu_stop), as the Python agent does for `!gpu start`.

Run it under `strata_gpu_dump --late --report R.json -- python3 late_start.py`: the dump gives it
STRATA_GPU_COLLECTOR and the STRATA_GPU_* settings and reads the ring. Uses torch when it has a
GPU, else CuPy; exits 77 when neither is there. Prints one JSON line with what it did.
"""
import ctypes
import json
import os
import sys

BEFORE, DURING, AFTER = 50, 200, 50


def pick_backend():
    try:
        import torch

        if torch.cuda.is_available():
            x = torch.ones(1 << 16, device="cuda")

            def launch():
                x.add_(1)  # @late:torch

            return "torch", launch, torch.cuda.synchronize
    except ImportError:
        pass
    try:
        import cupy

        y = cupy.ones(1 << 16, dtype=cupy.float32)

        def launch():
            y.__iadd__(1)  # @late:cupy

        return "cupy", launch, cupy.cuda.runtime.deviceSynchronize
    except ImportError:
        pass
    return None


def status(lib):
    buf = ctypes.create_string_buffer(1024)
    lib.strata_gpu_status(buf, len(buf))
    return buf.value.decode()


def main():
    chosen = pick_backend()
    if chosen is None:
        print("SKIPPED: neither torch with a GPU nor CuPy is available")
        return 77
    name, launch, sync = chosen
    for _ in range(BEFORE):
        launch()
    sync()
    lib = ctypes.CDLL(os.environ["STRATA_GPU_COLLECTOR"])
    started = lib.strata_gpu_start(b"mode=stacks")
    after_start = status(lib)
    for _ in range(DURING):
        launch()
    sync()
    flushed = lib.strata_gpu_flush()
    stopped = lib.strata_gpu_stop()
    after_stop = status(lib)
    for _ in range(AFTER):
        launch()
    sync()
    print(json.dumps({"backend": name, "before": BEFORE, "during": DURING, "after": AFTER, "start": started,
                      "flush": flushed, "stop": stopped, "statusAfterStart": after_start,
                      "statusAfterStop": after_stop, "statusAtEnd": status(lib)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
