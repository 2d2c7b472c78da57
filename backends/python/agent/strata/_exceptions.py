"""Exception breakpoints: filters, and whether anything up the stack will catch an exception."""
import builtins
import sys

from ._sources import getlines

FILTERS = [
    {"filter": "raised", "label": "Raised Exceptions", "default": False,
     "supportsCondition": True,
     "conditionDescription": "Exception types to stop on, e.g. ValueError, KeyError"},
    {"filter": "uncaught", "label": "Uncaught Exceptions", "default": True,
     "supportsCondition": True,
     "conditionDescription": "Exception types to stop on, e.g. ValueError, KeyError"},
    {"filter": "userUnhandled", "label": "User Uncaught Exceptions", "default": False,
     "supportsCondition": True,
     "conditionDescription": "Exception types to stop on, e.g. ValueError, KeyError"},
]
# Sticky CUDA errors, reported by Strata's CUDA collector through its error hook (_gpu.py):
# not a Python exception, so no RAISE events for it.
CUDA_FILTER = "cuda"
FILTERS.append({"filter": CUDA_FILTER, "label": "CUDA errors", "default": True,
                "description": "Stop when a CUDA call returns a sticky error (illegal address, device "
                               "assert, launch failure) in a program run with GPU collection: at the "
                               "calling line, with the error and the last kernel launched"})
RAISE_NAMES = {"raised", "uncaught", "userUnhandled"}
NAMES = {f["filter"] for f in FILTERS}


def parse_type_condition(text):
    """'ValueError, KeyError' -> set of names; a type matches by name, qualname or module path."""
    names = {t.strip() for t in str(text).replace(";", ",").split(",") if t.strip()}
    for n in names:
        if not all(part.isidentifier() for part in n.split(".")):
            raise ValueError(f"invalid exception type name {n!r}")
    return names


def type_matches(exc_type, names):
    if not names:
        return True
    for t in exc_type.__mro__:
        if t.__name__ in names or t.__qualname__ in names or f"{t.__module__}.{t.__qualname__}" in names:
            return True
    return False


_instr_cache = {}


def _instructions(code):
    got = _instr_cache.get(code)
    if got is None:
        import dis
        got = list(dis.get_instructions(code))
        _instr_cache[code] = got
    return got


def _resolve_type(frame, ins):
    if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
        name = ins.argval
        if isinstance(name, tuple):
            name = name[-1]
        if ins.opname == "LOAD_NAME" and name in frame.f_locals:
            return frame.f_locals[name]
        if name in frame.f_globals:
            return frame.f_globals[name]
        return getattr(builtins, name, None)
    if ins.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_FAST_CHECK"):
        return frame.f_locals.get(ins.argval)
    return None


def _handler_catches(frame, target, exc):
    """Reads the handler code at target: (True, None) when an except clause takes exc,
    (False, offset) when the handler re-raises at offset (finally, with, no clause matched)."""
    ins = _instructions(frame.f_code)
    by_offset = {i.offset: k for k, i in enumerate(ins)}
    k = by_offset.get(target)
    if k is None:
        return True, None
    steps = 0
    while k < len(ins) and steps < 400:
        steps += 1
        i = ins[k]
        op = i.opname
        if op == "RERAISE":
            return False, i.offset
        if op == "POP_EXCEPT":
            nxt = ins[k + 1] if k + 1 < len(ins) else None
            if nxt is not None and nxt.opname == "RERAISE":
                return False, nxt.offset
            return True, None
        if op in ("CHECK_EXC_MATCH", "CHECK_EG_MATCH", "JUMP_IF_NOT_EXC_MATCH"):
            types = _clause_types(frame, ins, k)
            if types is None:
                return True, None
            try:
                if isinstance(exc, types):
                    return True, None
            except TypeError:
                return True, None
            if op == "JUMP_IF_NOT_EXC_MATCH":  # 3.10: the test and the jump are one instruction
                k = by_offset.get(i.argval)
                if k is None:
                    return True, None
                continue
            nxt = ins[k + 1] if k + 1 < len(ins) else None
            if nxt is None or not nxt.opname.startswith("POP_JUMP"):
                return True, None
            k = by_offset.get(nxt.argval)
            if k is None:
                return True, None
            continue
        k += 1
    return True, None


def _clause_types(frame, ins, k):
    prev = ins[k - 1]
    if prev.opname == "BUILD_TUPLE":
        n = prev.arg
        loads = ins[k - 1 - n:k - 1]
        types = tuple(_resolve_type(frame, i) for i in loads)
        if any(t is None for t in types):
            return None
        return types
    t = _resolve_type(frame, prev)
    if t is None:
        return None
    return t


def _parse_varint(it):
    b = next(it)
    val = b & 63
    while b & 64:
        val <<= 6
        b = next(it)
        val |= b & 63
    return val


_table_cache = {}


def _block_table(code):
    """3.10 has no exception table: the ranges its SETUP_* instructions protect, from each
    setup to its handler, innermost first."""
    entries = [(i.offset + 2, i.argval, i.argval) for i in _instructions(code)
               if i.opname in ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH")]
    entries.sort(key=lambda e: -e[0])
    return entries


def exception_table(code):
    """(start, end, target) byte offsets, parsed like dis does from co_exceptiontable."""
    got = _table_cache.get(code)
    if got is not None:
        return got
    if not hasattr(code, "co_exceptiontable"):
        _table_cache[code] = got = _block_table(code)
        return got
    it = iter(code.co_exceptiontable)
    entries = []
    try:
        while True:
            start = _parse_varint(it) * 2
            end = start + _parse_varint(it) * 2
            target = _parse_varint(it) * 2
            _parse_varint(it)
            entries.append((start, end, target))
    except StopIteration:
        pass
    _table_cache[code] = entries
    return entries


def caught_by_runtime(exc, frame):
    """Exceptions that C code (for loops, generators, attribute fallback) consumes
    without any handler in a code object's exception table."""
    if isinstance(exc, (StopIteration, StopAsyncIteration, GeneratorExit)):
        return True
    if isinstance(exc, SystemExit) and exc.code in (None, 0):
        return True
    return isinstance(exc, AttributeError) and frame.f_code.co_name in ("__getattr__", "__getattribute__")


def find_catcher(frame, exc, is_boundary):
    """The first frame from `frame` outwards whose handler will catch exc, or None."""
    f = frame
    while f is not None:
        if is_boundary(f):
            return None
        lasti = f.f_lasti
        table = exception_table(f.f_code)
        for _ in range(64):
            entry = next((e for e in table if e[0] <= lasti < e[1]), None)
            if entry is None:
                break
            try:
                catches, reraise_at = _handler_catches(f, entry[2], exc)
            except Exception:
                return f
            if catches:
                return f
            if reraise_at is None:
                break
            lasti = reraise_at
        f = f.f_back
    return None


def _frames_of(frame, is_boundary):
    frames = []
    f = frame
    while f is not None and not (is_boundary and is_boundary(f)):
        frames.append((f, f.f_lineno))
        f = f.f_back
    frames.reverse()
    return frames


def _plain_stack(frames):
    """What traceback.StackSummary.format gives, without importing it (no carets)."""
    stack = []
    for f, line in frames:
        code = f.f_code
        stack.append(f'  File "{code.co_filename}", line {line}, in {code.co_name}\n')
        src = getlines(code.co_filename)
        if line and 0 < line <= len(src) and src[line - 1].strip():
            stack.append(f"    {src[line - 1].strip()}\n")
    return stack


def traceback_text(frame, exc, is_boundary=None):
    """The traceback a user would read: the program's frames only, not the launcher's."""
    frames = _frames_of(frame, is_boundary)
    tb = sys.modules.get("traceback")
    if getattr(tb, "format_exception_only", None) is not None:
        stack = tb.StackSummary.extract(frames).format()
        only = tb.format_exception_only(type(exc), exc)
    else:
        # The program has not imported traceback: importing it here, on the way to a stop,
        # would cost it (and linecache, re, enum) 10-20 ms. The same text without the carets.
        stack, only = _plain_stack(frames), _exception_only(exc)
    return "Traceback (most recent call last):\n" + "".join(stack) + "".join(only)


def stack_text(frame, last_line, is_boundary=None):
    """A traceback's shape for something that is not a Python exception (a CUDA error): the
    program's frames, then `last_line`."""
    return ("Traceback (most recent call last):\n" + "".join(_plain_stack(_frames_of(frame, is_boundary)))
            + last_line + "\n")


def _exception_only(exc):
    t = type(exc)
    name = t.__qualname__ if t.__module__ in ("builtins", "__main__") else f"{t.__module__}.{t.__qualname__}"
    try:
        msg = str(exc)
    except Exception:
        msg = "<exception str() failed>"
    out = []
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        out.append(f'  File "{exc.filename or "<string>"}", line {exc.lineno}\n')
        if exc.text:
            out.append(f"    {exc.text.strip()}\n")
        msg = exc.msg or ""
    out.append(f"{name}: {msg}\n" if msg else f"{name}\n")
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, (list, tuple)):
        out.extend(f"{n}\n" for n in notes if isinstance(n, str))
    return out


def describe(exc):
    t = type(exc)
    name = t.__qualname__ if t.__module__ in ("builtins", "__main__") else f"{t.__module__}.{t.__qualname__}"
    try:
        msg = str(exc)
    except Exception as e:
        msg = f"<str() failed: {type(e).__name__}>"
    return name, msg


