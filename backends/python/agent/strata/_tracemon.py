"""sys.monitoring's interface on CPython 3.10 and 3.11, which have only tracing: the agent asks
for the same events, and the core's C trace function (trace_core.hpp) delivers them.

What it does not have: per-line DISABLE (a line callback's DISABLE is ignored; a start
callback's holds until restart_events), JUMP events (a backward jump reports its line again,
as tracing does), and tool ids other than the one debugger's."""
import threading

try:
    from . import _strata_core as _core
except ImportError as e:
    raise ImportError(
        "Strata's agent needs its C core (_strata_core) on Python 3.10 and 3.11, where it traces "
        "from C; it was not built for this interpreter") from e

DEBUGGER_ID = 0
DISABLE = object()
MISSING = object()


class events:
    NO_EVENTS = 0
    PY_START = 1
    PY_RESUME = 2
    PY_RETURN = 4
    PY_YIELD = 8
    CALL = 16
    LINE = 32
    INSTRUCTION = 64
    JUMP = 128
    BRANCH = 256
    STOP_ITERATION = 512
    RAISE = 1024
    EXCEPTION_HANDLED = 2048
    PY_UNWIND = 4096
    PY_THROW = 8192
    RERAISE = 16384
    C_RETURN = 32768
    C_RAISE = 65536


_DELIVERED = (events.PY_START | events.PY_RESUME | events.PY_RETURN | events.PY_YIELD | events.LINE
              | events.INSTRUCTION | events.RAISE)
_tools = {}
_lock = threading.Lock()


def use_tool_id(tool, name):
    with _lock:
        if tool in _tools:
            raise ValueError(f"tool {tool} is already in use")
        other = _core.trace_foreign()
        if other is not None:
            _tools[-1] = f"another trace function (sys.settrace): {other}"
            raise ValueError("another tracer is in use")
        _tools[tool] = name


def get_tool(tool):
    return _tools.get(tool) or _tools.get(-1)


def free_tool_id(tool):
    with _lock:
        _tools.pop(tool, None)
        _core.trace_reset()


def register_callback(tool, event, func):
    if event & _DELIVERED:
        _core.trace_callback(event, func)


def set_events(tool, event_set):
    _core.trace_set_events(event_set & _DELIVERED)


def get_events(tool):
    return _core.trace_get_events()


def set_local_events(tool, code, event_set):
    _core.trace_set_local(code, event_set & _DELIVERED)


def restart_events():
    _core.trace_restart()
