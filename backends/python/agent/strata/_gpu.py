"""Late GPU collection: loads Strata's CUDA collector (libstrata_cupti.so) into this process
with ctypes and starts or stops it, for the adapter's `strataGpuStart`/`strataGpuStop`
requests (`gpuStart`/`gpuStop`, `!gpu start|stop`). Imported only when asked: ctypes costs
nothing to a session that never collects."""
import ctypes

_libs = {}


def _load(path):
    lib = _libs.get(path)
    if lib is None:
        # RTLD_GLOBAL is not needed: the collector finds CPython's C API with dlsym itself.
        lib = ctypes.CDLL(path)
        lib.strata_gpu_start.argtypes = [ctypes.c_char_p]
        lib.strata_gpu_start.restype = ctypes.c_int
        lib.strata_gpu_stop.argtypes = []
        lib.strata_gpu_stop.restype = ctypes.c_int
        lib.strata_gpu_status.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.strata_gpu_status.restype = ctypes.c_int
        _libs[path] = lib
    return lib


def status(lib):
    buf = ctypes.create_string_buffer(1024)
    lib.strata_gpu_status(buf, len(buf))
    return buf.value.decode("utf-8", "replace")


def start(collector, config):
    """(result, status): 0 when collecting; -1 with the reason in the status; -2 a bad config."""
    lib = _load(collector)
    # ctypes lets go of the GIL for the call: CUPTI may wait on the driver meanwhile.
    result = lib.strata_gpu_start(config.encode())
    return result, status(lib)


def stop(collector):
    lib = _load(collector)
    result = lib.strata_gpu_stop()
    return result, status(lib)
