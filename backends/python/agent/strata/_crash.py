"""The crash guard: the adapter's "strataCrash" argument (a loopback address, a token, its pid)
arms a handler for the fatal signals in C (_strata_crash.so, crash_guard.c), over a socket to
that address. At a crash the handler tells the adapter which thread crashed where and waits until
its native debugger is in, which then stops the program at the fault with every thread's merged
stack. The session's end disarms it; a forked child closes its copy of the socket unused."""
import ctypes
import os

LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_strata_crash.so")

_lib = None
_sock = None


def arm(address, token, tracer=0):
    """Arms the guard; returns None, or why it could not be armed (the session goes on without)."""
    global _lib, _sock
    if not os.path.exists(LIBRARY):
        return f"{LIBRARY} is missing"
    from ._link import dial, parse_address
    disarm()
    try:
        if _lib is None:
            _lib = ctypes.CDLL(LIBRARY)
            _lib.strata_crash_arm.argtypes = (ctypes.c_int, ctypes.c_int)
        host, port = parse_address(address)
        sock = dial(host, port, token=str(token)).sock  # blocking once connected
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    if _lib.strata_crash_arm(sock.fileno(), int(tracer or 0)) != 0:
        sock.close()
        return "the signal handlers could not be installed"
    _sock = sock
    return None


def disarm():
    global _sock
    if _lib is not None:
        _lib.strata_crash_disarm()
    if _sock is not None:
        try:
            _sock.close()
        except OSError:
            pass
        _sock = None
