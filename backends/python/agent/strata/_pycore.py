"""Pure-Python stand-in for _strata_core, used when the extension was not built for this Python."""
import sys
import threading

_g = {"codes": None, "files": None, "funcnames": None, "on_start": None, "on_line": None,
      "log_queue": None, "disable": None, "step": 0, "last_bp": None}


def _log(bp, text):
    q = _g["log_queue"]
    if bp is not _g["last_bp"]:
        q.append(bp)
        _g["last_bp"] = bp
    q.append(text)


def configure(codes, files, funcnames, on_start, on_line, log_queue, disable):
    _g.update(codes=codes, files=files, funcnames=funcnames, on_start=on_start,
              on_line=on_line, log_queue=log_queue, disable=disable, last_bp=None)


def reset():
    for k in _g:
        _g[k] = None
    _g["step"] = 0


_internal = set()


def set_step_mode(on):
    _g["step"] = on


def set_internal_threads(idents, pkg_dir=None):
    _internal.clear()
    _internal.update(idents)


def mixed_step(tid):
    """Mixed mode's step table lives in the C core only (the native debugger writes it there):
    without the core, every step is taken as armed."""
    return 0


def mixed_step_clear(tid):
    pass


def set_native_step_hook(hook):
    """Only the C core has the pending call the native debugger queues."""


def step_mode():
    return _g["step"]


def _call_fn(fn, argnames):
    frame = sys._getframe(3)
    loc = frame.f_locals
    return fn(*[loc[n] for n in argnames])


def _handle_line(code, line):
    lines = _g["codes"].get(code)
    if lines is None:
        return _g["disable"]
    entry = lines.get(line)
    if entry is None:
        return _g["disable"]
    kind = entry[0]
    if kind == 1:
        try:
            ok = _call_fn(entry[1], entry[2])
        except Exception:
            return _g["on_line"](code, line, 0)
        return _g["on_line"](code, line, 1) if ok else None
    if kind == 2:
        try:
            _log(entry[3], _call_fn(entry[1], entry[2]))
            return None
        except Exception:
            pass
    if kind == 3:
        try:
            loc = sys._getframe(2).f_locals
            parts = entry[1]
            _log(entry[3], "".join(p if i % 2 == 0 else format(loc[p]) for i, p in enumerate(parts)))
            return None
        except Exception:
            pass
    return _g["on_line"](code, line, 0)


def line(code, line):
    if _g["step"]:
        if _internal and threading.get_ident() in _internal:
            return None
        return _g["on_line"](code, line, 0)
    if _g["codes"] is None:
        return _g["disable"]
    return _handle_line(code, line)


def jump(code, src, dst):
    if dst >= src:
        return _g["disable"]
    dl = sl = None
    for start, end, ln in code.co_lines():
        if start <= dst < end:
            dl = ln
        if start <= src < end:
            sl = ln
    if dl is None or dl != sl:
        return _g["disable"]
    if _g["step"]:
        return _g["on_line"](code, dl, 0)
    if _g["codes"] is None:
        return _g["disable"]
    return _handle_line(code, dl)


def py_start(code, offset):
    if _g["codes"] is None:
        return _g["disable"]
    if _g["funcnames"] and code.co_name in _g["funcnames"]:
        return _g["on_start"](code)
    if code in _g["codes"]:
        return _g["disable"]
    if code.co_filename in _g["files"]:
        return _g["on_start"](code)
    return _g["disable"]


def locals_to_fast(frame):
    if sys.version_info < (3, 13):
        import ctypes
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))


def async_raise(thread_id, exc_type):
    import ctypes
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type else None)
