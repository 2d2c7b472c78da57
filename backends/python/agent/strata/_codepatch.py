"""Line breakpoints on CPython 3.11 without a frame-evaluation hook: a call into the agent's core
written into the code objects that have breakpoint lines.

Why: on 3.11 any PEP 523 frame-evaluation hook (the way the core sees which frame starts, to trace
only frames with breakpoints) stops the interpreter from inlining Python-to-Python calls, which
costs a call-heavy program 1.1-1.5x even when the breakpoint is in a function that never runs.
With the call written into the code instead, code without breakpoints runs exactly as it does
without a debugger, and a code object with a breakpoint pays one C call where its line starts.

How:
- rewrite(code, lines, hook) returns a copy of `code` with `hook(line)` (PUSH_NULL, LOAD_CONST,
  LOAD_CONST, PRECALL, CALL, POP_TOP) in front of each place where one of `lines` is entered:
  from another line, from the function's start, or by a backward jump (a `for` line is entered
  again on every iteration), exactly where 3.11's tracing reports a line. A fall-through or a forward jump from the
  same line goes past the call (a JUMP_FORWARD over it, or the jump moved), so one entry is one
  call. 3.11's jumps are all relative; the rewrite moves every jump, the exception table and the
  location table with the instructions, and checks the result (locations and exception table
  read back as written) before it is used. Never placed: before the first RESUME, at RESUME,
  at PUSH_EXC_INFO (the handler's first line is entered after it), or between KW_NAMES/PRECALL
  and their CALL.
- Patcher finds the code: functions that exist already (one pass over the garbage collector's
  objects: every function object whose code comes from the file, closures and methods
  included) get `__code__` replaced; a module body about to run (the `exec` audit event, which
  importlib, runpy and exec() raise, or the start of a main script run by the interpreter
  itself) gets its constant code objects replaced in place, so every function it defines runs
  the patched code. A frame that runs the old code already (a running loop, a suspended
  generator) and a module body with a breakpoint of its own (it cannot be swapped once it runs)
  are armed the traced way (the hook), as before.
- The core's patched_line(line) skips when the frame is traced for lines already (a step: the
  trace reports the line) and otherwise takes the line as a LINE event would. A patched code is
  armed at its first call (its globals then known), as PY_START arms code elsewhere.
- Everything is undone when breakpoints change or the client goes: functions get their code
  back, module constants their code objects; a frame still running patched code finds its code
  unarmed and the call does nothing.
"""
import dis
import gc
import opcode
import sys
import types
import weakref

from . import _breakpoints as bpmod

_OPS = opcode.opmap
_CACHES = getattr(opcode, "_inline_cache_entries", None)
SUPPORTED = sys.version_info[:2] == (3, 11) and _CACHES is not None

if SUPPORTED:
    EXTENDED_ARG = _OPS["EXTENDED_ARG"]
    RESUME = _OPS["RESUME"]
    PUSH_EXC_INFO = _OPS["PUSH_EXC_INFO"]
    KW_NAMES = _OPS["KW_NAMES"]
    PRECALL = _OPS["PRECALL"]
    CALL = _OPS["CALL"]
    PUSH_NULL = _OPS["PUSH_NULL"]
    LOAD_CONST = _OPS["LOAD_CONST"]
    POP_TOP = _OPS["POP_TOP"]
    JUMP_FORWARD = _OPS["JUMP_FORWARD"]
    SEND = _OPS["SEND"]
    JREL = frozenset(dis.hasjrel)
    BACKWARD = frozenset(op for op in JREL if "BACKWARD" in opcode.opname[op])
    NO_FALLTHROUGH = frozenset(_OPS[n] for n in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                                                 "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"))
    NO_BEFORE = frozenset((KW_NAMES, PRECALL))  # never between these and their CALL
    CALL_STACK = 3  # what the inserted call needs on the value stack at most

_GEN_TYPES = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


class _Ins:
    __slots__ = ("start", "op", "arg", "ext", "ncache", "line", "upos", "target")


def _decode(code):
    raw = code.co_code
    positions = list(code.co_positions())
    n = len(raw) // 2
    out = []
    i = 0
    while i < n:
        ins = _Ins()
        ins.start = i
        arg = 0
        op = raw[2 * i]
        while op == EXTENDED_ARG:
            arg = (arg | raw[2 * i + 1]) << 8
            i += 1
            op = raw[2 * i]
        arg |= raw[2 * i + 1]
        ins.op, ins.arg, ins.ext = op, arg, i - ins.start
        ins.ncache = _CACHES[op]
        ins.line = positions[i][0]
        i += 1 + ins.ncache
        ins.upos = positions[ins.start:i]
        ins.target = None
        if op in JREL:
            ins.target = i - arg if op in BACKWARD else i + arg
        out.append(ins)
    return out, positions


def _read_varint(data, i):
    b = data[i]
    i += 1
    val = b & 63
    while b & 64:
        b = data[i]
        i += 1
        val = (val << 6) | (b & 63)
    return val, i


def parse_exception_table(data):
    """[(start, end, target, depth, lasti)] in code units, end exclusive."""
    out = []
    i = 0
    while i < len(data):
        start, i = _read_varint(data, i)
        length, i = _read_varint(data, i)
        target, i = _read_varint(data, i)
        dl, i = _read_varint(data, i)
        out.append((start, start + length, target, dl >> 1, dl & 1))
    return out


def _write_exc_item(out, value, msb):
    for shift in (24, 18, 12, 6):
        if value >= 1 << shift:
            out.append(((value >> shift) & 63) | 64 | msb)
            msb = 0
    out.append((value & 63) | msb)


def encode_exception_table(entries):
    out = bytearray()
    for start, end, target, depth, lasti in entries:
        _write_exc_item(out, start, 128)
        _write_exc_item(out, end - start, 0)
        _write_exc_item(out, target, 0)
        _write_exc_item(out, (depth << 1) | lasti, 0)
    return bytes(out)


def _varint(out, val):
    while val >= 64:
        out.append(64 | (val & 63))
        val >>= 6
    out.append(val)


def _svarint(out, val):
    _varint(out, ((-val) << 1) | 1 if val < 0 else val << 1)


def encode_locations(positions, firstlineno):
    """3.11's location table for one (line, end_line, column, end_column) per code unit."""
    out = bytearray()
    prev = firstlineno
    i, n = 0, len(positions)
    while i < n:
        pos = positions[i]
        j = i + 1
        while j < n and j - i < 8 and positions[j] == pos:
            j += 1
        size = j - i - 1
        line, end_line, col, end_col = pos
        if line is None:
            out.append(0x80 | (15 << 3) | size)
        elif col is None or end_col is None or end_line is None:
            out.append(0x80 | (13 << 3) | size)
            _svarint(out, line - prev)
            prev = line
        else:
            out.append(0x80 | (14 << 3) | size)
            _svarint(out, line - prev)
            _varint(out, end_line - line)
            _varint(out, col + 1)
            _varint(out, end_col + 1)
            prev = line
        i = j
    return bytes(out)


def _ext_for(arg):
    return 0 if arg < 1 << 8 else 1 if arg < 1 << 16 else 2 if arg < 1 << 24 else 3


class _Item:
    __slots__ = ("op", "arg", "ext", "ncache", "label", "backward", "upos", "off")

    def __init__(self, op, arg, ncache, upos, ext=0, label=None, backward=False):
        self.op, self.arg, self.ncache, self.upos = op, arg, ncache, upos
        self.ext, self.label, self.backward = ext, label, backward
        self.off = 0


def _plan(ins, lines):
    """Where calls go: {instruction index: whether a fall-through must jump over the call},
    the jumps that must land past the call, and the lines that got a call."""
    first = next((k for k, x in enumerate(ins) if x.op == RESUME), None)
    if first is None:
        return None
    by_start = {x.start: k for k, x in enumerate(ins)}
    jumps_to = {}
    for j, x in enumerate(ins):
        if x.target is not None:
            k = by_start.get(x.target)
            if k is None:
                return None
            jumps_to.setdefault(k, []).append(j)

    def line_before(p):
        return None if p <= first or ins[p].op == PUSH_EXC_INFO else ins[p].line

    blocks, past, covered = {}, set(), set()
    for k in range(first + 1, len(ins)):
        x = ins[k]
        line = x.line
        if line not in lines or x.op in (RESUME, PUSH_EXC_INFO) or ins[k - 1].op in NO_BEFORE:
            continue
        fall = None if ins[k - 1].op in NO_FALLTHROUGH else line_before(k - 1) != line
        # A backward jump re-enters its line, except the one back to SEND of `yield from`/`await`.
        from_jumps = {j: (ins[j].op in BACKWARD and x.op != SEND) or line_before(j) != line
                      for j in jumps_to.get(k, ())}
        if not (fall or any(from_jumps.values())):
            continue
        blocks[k] = fall is False
        past.update(j for j, fires in from_jumps.items() if not fires)
        covered.add(line)
    return first, blocks, past, covered, by_start


def rewrite(code, lines, hook, consts=None):
    """`code` with hook(line) where each of `lines` is entered, or None where that cannot be done
    for every one of them (the caller arms such code the traced way)."""
    if not SUPPORTED:
        return None
    ins, positions = _decode(code)
    plan = _plan(ins, lines)
    if plan is None:
        return None
    first, blocks, past, covered, by_start = plan
    # A line only the function's prologue has (the `def` line at RESUME) is never reported by
    # tracing either; every other line must get its call.
    reported = {x.line for x in ins[first + 1:] if x.op not in (RESUME, PUSH_EXC_INFO)}
    if covered != set(lines) & reported:
        return None
    consts = list(code.co_consts if consts is None else consts)
    hook_index = len(consts)
    consts.append(hook)
    line_index = {}
    for line in sorted(covered):
        line_index[line] = len(consts)
        consts.append(line)

    items, labels = [], {}  # labels: ("i", k) the instruction, ("b", k) its call
    for k, x in enumerate(ins):
        if k in blocks:
            pos = [x.upos[x.ext]]
            if blocks[k]:
                items.append(_Item(JUMP_FORWARD, 0, 0, pos, label=("i", k)))
            labels[("b", k)] = len(items)
            li = line_index[x.line]
            items.append(_Item(PUSH_NULL, 0, 0, pos))
            items.append(_Item(LOAD_CONST, hook_index, 0, pos, ext=_ext_for(hook_index)))
            items.append(_Item(LOAD_CONST, li, 0, pos, ext=_ext_for(li)))
            items.append(_Item(PRECALL, 1, _CACHES[PRECALL], pos))
            items.append(_Item(CALL, 1, _CACHES[CALL], pos))
            items.append(_Item(POP_TOP, 0, 0, pos))
        labels[("i", k)] = len(items)
        label = None
        if x.target is not None:
            t = by_start[x.target]
            label = ("b", t) if t in blocks and k not in past else ("i", t)
        items.append(_Item(x.op, x.arg, x.ncache, x.upos, ext=x.ext, label=label, backward=x.op in BACKWARD))

    for it in items:
        if it.label is None:
            it.ext = max(it.ext, _ext_for(it.arg))
    while True:
        off = 0
        for it in items:
            it.off = off
            off += it.ext + 1 + it.ncache
        total = off
        grew = False
        for it in items:
            if it.label is None:
                continue
            nxt = it.off + it.ext + 1 + it.ncache
            dest = items[labels[it.label]].off
            arg = nxt - dest if it.backward else dest - nxt
            if arg < 0:
                return None
            it.arg = arg
            need = _ext_for(arg)
            if need > it.ext:
                it.ext = need
                grew = True
        if not grew:
            break

    raw = bytearray()
    new_pos = []
    for it in items:
        for e in range(it.ext, 0, -1):
            raw += bytes((EXTENDED_ARG, (it.arg >> (8 * e)) & 0xFF))
        raw += bytes((it.op, it.arg & 0xFF))
        raw += b"\0\0" * it.ncache
        units = it.ext + 1 + it.ncache
        # The position of each unit: an instruction's own, with an EXTENDED_ARG that it did not
        # have before taking the position of its first unit.
        pos = list(it.upos)
        if len(pos) < units:
            pos = [pos[0]] * (units - len(pos)) + pos
        elif len(pos) > units:
            pos = pos[len(pos) - units:]
        new_pos.extend(pos)

    def at(unit, call_first):
        if unit == len(positions):
            return total
        k = by_start.get(unit)
        if k is None:
            raise ValueError
        if call_first and k in blocks:
            return items[labels[("i", k)] - (7 if blocks[k] else 6)].off
        return items[labels[("i", k)]].off

    try:
        table = [(at(s, True), at(e, True), at(t, False), d, lasti)
                 for s, e, t, d, lasti in parse_exception_table(code.co_exceptiontable)]
    except ValueError:
        return None
    try:
        new = code.replace(co_code=bytes(raw), co_consts=tuple(consts),
                           co_linetable=encode_locations(new_pos, code.co_firstlineno),
                           co_exceptiontable=encode_exception_table(table),
                           co_stacksize=code.co_stacksize + CALL_STACK)
    except (ValueError, TypeError):
        return None
    # What was written must read back as meant before any frame runs it.
    if list(new.co_positions()) != new_pos or parse_exception_table(new.co_exceptiontable) != table:
        return None
    return new


class Patcher:
    """The patched code of one agent (Monitor): which functions and module constants run a
    patched code object, and how to put every one back."""

    def __init__(self, monitor, core):
        self.m = monitor
        self.core = core
        self.hook = core.patched_line
        self.made = {}       # patched code -> (canon, original)
        self.with_calls = set()  # patched codes that have calls (armed at their first call)
        self.stale = set()   # patched codes no longer in use: their calls do nothing
        self.funcs = {}      # canon -> [(function, original, patched)]
        self.consts = {}     # canon -> [(weakref to the holder code, index, original, patched)]
        self.main_pending = None  # canon of a main script the interpreter is yet to run
        self.traced = []     # codes armed the traced way for want of a patch
        core.patch_setup(self._on_call, self.stale, self._on_exec)

    # ---- what the core calls ---------------------------------------------------------
    def _on_call(self, code):
        """The first call in a patched code: armed now (its globals known), or stale."""
        if code not in self.with_calls:
            self.stale.add(code)
            return False
        frame = sys._getframe(1)
        self.m.arm_patched(code, frame.f_globals)
        return code in self.m.codes

    def _on_exec(self, code):
        """A module body of a file with breakpoints is about to run (exec audit event)."""
        if code in self.made:
            return
        canon = self.m.files.get(code.co_filename)
        if canon is None:
            return
        self.module_started(code, canon, None)

    # ---- queries ----------------------------------------------------------------------
    def owns(self, code):
        """Whether `code` has calls written in (armed without events)."""
        return code in self.with_calls

    def needs_start_events(self):
        """Whether a file with breakpoints may still start code the patcher cannot see: a main
        script the interpreter runs itself (no exec audit event)."""
        return self.main_pending is not None and bool(self.m.line_bps.get(self.main_pending))

    # ---- patching ---------------------------------------------------------------------
    def _tree(self, code, canon, lines, done, body=False):
        """`code` with its nested code objects patched, and calls of its own where it has
        breakpoint lines; `code` itself when nothing in it changes. A module body gets calls
        only where it has not started yet (`body`): one that runs already cannot be swapped."""
        got = done.get(code)
        if got is not None:
            return got
        if code in self.made:
            return code
        consts = None
        for i, c in enumerate(code.co_consts):
            if isinstance(c, types.CodeType):
                p = self._tree(c, canon, lines, done)
                if p is not c:
                    if consts is None:
                        consts = list(code.co_consts)
                    consts[i] = p
        want = lines & bpmod.code_lines(code)
        new = None
        if want and (body or code.co_name != "<module>"):
            new = rewrite(code, want, self.hook, consts)
            if new is not None:
                self.with_calls.add(new)
        if new is None:
            new = code.replace(co_consts=tuple(consts)) if consts is not None else code
            if want:
                self.traced.append((new, canon))
        if new is not code:
            self.made[new] = (canon, code)
        done[code] = new
        return new

    def module_started(self, code, canon, globals_):
        """A module body of `canon` starts: its constant code objects are swapped in place for
        patched ones, so the functions it defines run them; a breakpoint in the body itself is
        armed the traced way."""
        lines = set(self.m.line_bps.get(canon) or ())
        if canon == self.main_pending:
            self.main_pending = None
        if not lines:
            return
        done = {}
        holder = weakref.ref(code)
        for i, c in enumerate(code.co_consts):
            if isinstance(c, types.CodeType):
                p = self._tree(c, canon, lines, done)
                if p is not c:
                    self.core.swap_const(code, i, p)
                    self.consts.setdefault(canon, []).append((holder, i, c, p))
        if lines & bpmod.code_lines(code):
            self.traced.append((code, canon))
        self._arm_traced(globals_)

    def patch_main(self, code, canon):
        """The main script's module code, patched as a whole before it runs (the agent runs it)."""
        lines = set(self.m.line_bps.get(canon) or ())
        if not lines:
            return code
        new = self._tree(code, canon, lines, {}, body=True)
        self._arm_traced(None)
        return new

    def _arm_traced(self, globals_):
        todo, self.traced = self.traced, []
        for code, canon in todo:
            self.m.arm_traced(code, globals_)

    def _scan(self, names):
        """One pass over the collector's objects: functions of the file (`names`: its filenames),
        functions running patched code, and the code of every frame that runs (or is suspended
        in) code of the file, with that frame's globals."""
        funcs, patched, live = [], [], {}
        for top in sys._current_frames().values():
            f = top
            while f is not None:
                if f.f_code.co_filename in names:
                    live.setdefault(f.f_code, f.f_globals)
                f = f.f_back
        made = self.made
        for obj in gc.get_objects():
            t = type(obj)
            if t is types.FunctionType:
                code = obj.__code__
                if code in made:
                    patched.append(obj)
                elif code.co_filename in names:
                    funcs.append(obj)
            elif t in _GEN_TYPES:
                frame = getattr(obj, "gi_frame", None) or getattr(obj, "cr_frame", None) or getattr(obj, "ag_frame", None)
                if frame is not None and frame.f_code.co_filename in names:
                    live.setdefault(frame.f_code, frame.f_globals)
        return funcs, patched, live

    def apply(self, canon):
        """Breakpoints of `canon` changed: patched code of the old ones goes, the new ones are
        written into every function of the file that exists. A frame that runs (or a generator
        suspended in) code of the file keeps its code, armed the traced way."""
        names = {f for f, c in self.m.files.items() if c == canon}
        names.update(c.co_filename for c, (k, _) in self.made.items() if k == canon)
        files = self.m.files
        loaded = any(files.get(getattr(mod, "__file__", None)) == canon for mod in list(sys.modules.values()))
        if not loaded and not self.funcs.get(canon) and not self.consts.get(canon) \
                and not any(k == canon for k, _ in self.made.values()):
            return  # nothing of the file has run: its module body will be seen as it starts
        funcs, patched, live = self._scan(names)
        self.revert(canon, live, patched)
        funcs.extend(f for f in patched if f.__code__.co_filename in names and f.__code__ not in self.made)
        lines = set(self.m.line_bps.get(canon) or ())
        if not lines:
            return
        done = {}
        rec = self.funcs.setdefault(canon, [])
        for f in funcs:
            orig = f.__code__
            new = self._tree(orig, canon, lines, done)
            if new is not orig:
                try:
                    f.__code__ = new
                except (ValueError, TypeError):
                    self.m.arm_traced(orig, f.__globals__)
                    continue
                rec.append((f, orig, new))
        self._arm_traced(None)
        for code, globals_ in live.items():
            self.m.arm_traced(code, globals_)

    def revert(self, canon, live=(), patched=None):
        """Every function and module constant of `canon` gets its original code back. `patched`:
        the functions that run patched code (the collector is asked when not given)."""
        for f, orig, new in self.funcs.pop(canon, ()):
            if f.__code__ is new:
                f.__code__ = orig
        for holder, i, orig, new in self.consts.pop(canon, ()):
            code = holder()
            if code is not None and i < len(code.co_consts) and code.co_consts[i] is new:
                # A code object's hash covers its constants: where it is a key (armed), it is
                # taken out for the swap and put back.
                self.m.rekeyed(code, lambda code=code, i=i, orig=orig: self.core.swap_const(code, i, orig))
        gone = {c for c, (k, _) in self.made.items() if k == canon}
        if not gone:
            return
        # Functions made from patched code while it was in place (closures) get the original.
        if patched is None:
            patched = [o for o in gc.get_objects() if type(o) is types.FunctionType and o.__code__ in gone]
        for f in patched:
            if f.__code__ in gone:
                f.__code__ = self.made[f.__code__][1]
        for c in gone:
            del self.made[c]
            self.with_calls.discard(c)
            if c not in live:
                self.m.codes.pop(c, None)
                self.stale.add(c)

    def revert_all(self):
        for canon in set(self.funcs) | set(self.consts) | {k for k, _ in self.made.values()}:
            self.revert(canon)
        self.core.patch_setup(None, self.stale, None)
