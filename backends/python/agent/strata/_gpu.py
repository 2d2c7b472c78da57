"""Strata's CUDA collector (libstrata_cupti.so) seen from the agent, with ctypes: late GPU
collection (the adapter's `strataGpuStart`/`strataGpuStop` requests, for `gpuStart`/`gpuStop`
and `!gpu start|stop`), and the collector's error hook, through which a sticky CUDA error stops
the thread that made the failing call. Imported only when a collector is in play: ctypes costs
nothing to a session that never collects."""
import ctypes
import os
import sys

COLLECTOR_NAME = "libstrata_cupti.so"

_libs = {}
_hooked = {}  # path -> the CFUNCTYPE object registered there (kept alive while registered)


class ErrorStruct(ctypes.Structure):
    """StrataGpuError (common/include/strata/strata_gpu.h)."""
    _fields_ = [("size", ctypes.c_uint32), ("result", ctypes.c_int32), ("domain", ctypes.c_uint32),
                ("cbid", ctypes.c_uint32), ("tid", ctypes.c_uint32), ("lastCorrelation", ctypes.c_uint32),
                ("lastSite", ctypes.c_uint32), ("reserved", ctypes.c_uint32), ("callerPc", ctypes.c_uint64),
                ("api", ctypes.c_char_p), ("error", ctypes.c_char_p), ("lastKernel", ctypes.c_char_p),
                ("message", ctypes.c_char_p)]


_HOOK = ctypes.CFUNCTYPE(None, ctypes.POINTER(ErrorStruct), ctypes.c_void_p)


class CudaError(Exception):
    """A sticky CUDA error, as the stop shows it (never raised: the program's CUDA call returns
    its error code as it would without Strata)."""

    def __init__(self, info):
        super().__init__(info["message"])
        self.info = info


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
        lib.strata_gpu_set_error_hook.argtypes = [_HOOK, ctypes.c_void_p]
        lib.strata_gpu_set_error_hook.restype = ctypes.c_int
        _libs[path] = lib
    return lib


def status(lib):
    buf = ctypes.create_string_buffer(1024)
    lib.strata_gpu_status(buf, len(buf))
    return buf.value.decode("utf-8", "replace")


def start(collector, config, on_error=None):
    """(result, status): 0 when collecting; -1 with the reason in the status; -2 a bad config.
    With on_error, the collector's error hook is registered first."""
    lib = _load(collector)
    if on_error is not None:
        watch_errors(collector, on_error)
    # ctypes lets go of the GIL for the call: CUPTI may wait on the driver meanwhile.
    result = lib.strata_gpu_start(config.encode())
    return result, status(lib)


def stop(collector):
    lib = _load(collector)
    result = lib.strata_gpu_stop()
    return result, status(lib)


def injected_collector(environ=os.environ):
    """The collector the CUDA driver will load (launch mode: the adapter names it in
    CUDA_INJECTION64_PATH), or None."""
    path = environ.get("CUDA_INJECTION64_PATH")
    if path and os.path.basename(path) == COLLECTOR_NAME and os.path.isfile(path):
        return path
    return None


def watch_errors(collector, on_error):
    """Registers on_error(info, frame) as the collector's error hook. The driver loads the same
    file at cuInit (dlopen finds it loaded), so registering before CUDA starts catches the first
    error. The hook runs in the failing thread inside a CUPTI callback; ctypes takes the GIL."""
    if collector in _hooked:
        return
    lib = _load(collector)

    def hook(error, _user):
        try:
            frame = sys._getframe(1)
        except ValueError:
            frame = None  # a thread that never ran Python code (CUDA's own, a C++ worker)
        try:
            on_error(describe(error.contents), frame)
        except BaseException:  # noqa: B036 - nothing may unwind into the collector's C++
            pass

    fn = _HOOK(hook)
    lib.strata_gpu_set_error_hook(fn, None)
    _hooked[collector] = fn


def unwatch_errors():
    """Removes the hooks (at exit: a CUDA call after the interpreter is gone must not call in)."""
    for path in list(_hooked):
        try:
            _libs[path].strata_gpu_set_error_hook(ctypes.cast(None, _HOOK), None)
        except Exception:
            pass
        # The function object stays referenced: another thread may be inside it right now.


def _text(raw):
    return raw.decode("utf-8", "replace") if raw else ""


def describe(e):
    """The struct as the stop shows it; the kernel's name demangled, in the message too."""
    size = e.size
    have = lambda field: size >= getattr(ErrorStruct, field).offset + getattr(ErrorStruct, field).size  # noqa: E731
    api = _text(e.api) if have("api") else ""
    error = _text(e.error) if have("error") else ""
    mangled = _text(e.lastKernel) if have("lastKernel") else ""
    message = _text(e.message) if have("message") else ""
    kernel = demangle(mangled)
    if mangled and kernel != mangled:
        message = message.replace(mangled, kernel, 1)
    if not error:
        error = f"CUDA error {e.result}"
    if not message:
        message = f"{api or 'a CUDA call'} returned {error}"
    return {"api": api, "error": error, "result": e.result, "domain": e.domain, "cbid": e.cbid,
            "tid": e.tid, "lastKernel": kernel, "lastCorrelation": e.lastCorrelation,
            "lastSite": e.lastSite, "callerPc": e.callerPc, "message": message}


def demangle(name):
    """An Itanium C++ name (nvcc's kernels) through libstdc++'s __cxa_demangle; others as given."""
    if not name.startswith("_Z"):
        return name
    try:
        cxx = ctypes.CDLL("libstdc++.so.6")
        fn = cxx.__cxa_demangle
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        state = ctypes.c_int(-1)
        out = fn(name.encode(), None, None, ctypes.byref(state))
        if state.value != 0 or not out:
            return name
        try:
            return ctypes.string_at(out).decode("utf-8", "replace")
        finally:
            libc = ctypes.CDLL(None)
            libc.free.argtypes = [ctypes.c_void_p]
            libc.free(out)
    except (OSError, AttributeError):
        return name


def stop_on_error(monitor, info, frame):
    """The hook's work for the agent (watch_errors(path, partial(stop_on_error, monitor))): a
    sticky CUDA error in this thread, its CUDA call not yet returned, becomes an exception stop
    at the line that made the call, the innermost frame of the program's own code. Returns
    whether it stopped."""
    import threading
    from . import _exceptions as excmod
    from ._usercode import PKG_DIR, is_launcher
    ident = threading.get_ident()
    if ident in monitor.internal or not monitor.active or not monitor.cuda_errors:
        return False
    f = frame
    while f is not None and f.f_code.co_filename.startswith(PKG_DIR):
        f = f.f_back
    innermost = f
    while f is not None and not monitor.is_user(f):
        f = f.f_back
    f = f or innermost  # only library code on the stack: its innermost frame
    if f is None:
        monitor.output(f"CUDA error in thread {threading.get_native_id()}, which runs no Python code, "
                       f"so there is no line to stop at: {info['message']}\n", category="important")
        return False
    ts = monitor.thread(ident)
    ts.busy = True
    try:
        ts.exc, ts.exc_mode = CudaError(info), "always"
        ts.exc_text = excmod.stack_text(f, f"{info['error']}: {info['message']}", is_launcher)
        monitor.parking.stop(ts, f, "exception", description=info["message"], text=info["error"])
    finally:
        ts.exc = None
        ts.busy = False
    return True


def exception_info(info, stack):
    """exceptionInfo's body for a CUDA error stop (the native backend answers the same)."""
    domain = {1: "driver API", 2: "runtime API"}.get(info["domain"], "API")
    kernel = (f"{info['lastKernel']} (correlation id {info['lastCorrelation']})" if info["lastKernel"]
              else "none")
    details = (f"CUDA call: {info['api'] or '?'} ({domain}, callback id {info['cbid']})\n"
               f"result: {info['result']} {info['error']}\n"
               f"last kernel launched on this thread: {kernel}\n"
               f"thread: {info['tid']}")
    return {"exceptionId": info["error"], "description": info["message"], "breakMode": "always",
            "details": {"message": info["message"], "typeName": info["error"],
                        "fullTypeName": f"{info['error']} (CUDA {domain} error {info['result']})",
                        "stackTrace": stack + details}}
