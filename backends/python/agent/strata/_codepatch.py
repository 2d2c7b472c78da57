"""Line breakpoints on CPython 3.11 without a frame-evaluation hook: a call into the agent's core
written into the code objects that have breakpoint lines. The rewrite of a code object is
_rewrite.py's; this module finds the code to patch, swaps it in and puts it back.

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
import gc
import sys
import types
import weakref

from . import _breakpoints as bpmod
# What tests/python/test_codepatch.py reads from this module.
from ._rewrite import (SUPPORTED, _decode, _plan, encode_exception_table, encode_locations,  # noqa: F401
                       parse_exception_table, rewrite)

if SUPPORTED:
    from ._rewrite import (CALL, JUMP_FORWARD, KW_NAMES, LOAD_CONST, POP_TOP, PRECALL,  # noqa: F401
                           PUSH_NULL, RESUME)

_GEN_TYPES = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


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
        self.m.tables.arm_patched(code, frame.f_globals)
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
        self._patch_consts(code, canon, lines, {})
        if lines & bpmod.code_lines(code):
            self.traced.append((code, canon))
        self._arm_traced(globals_)

    def _patch_consts(self, code, canon, lines, done):
        """The code objects among `code`'s constants swapped in place for patched ones: what
        `code` defines from now on (functions, classes, lambdas) runs the patched code. `code`
        may be armed already (a running frame's): it leaves the tables for the swap."""
        holder = weakref.ref(code)
        for i, c in enumerate(code.co_consts):
            if isinstance(c, types.CodeType):
                p = self._tree(c, canon, lines, done)
                if p is not c:
                    self.m.tables.rekeyed(code, lambda i=i, p=p: self.core.swap_const(code, i, p))
                    self.consts.setdefault(canon, []).append((holder, i, c, p))

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
            self.m.tables.arm_traced(code, globals_)

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
                    self.m.tables.arm_traced(orig, f.__globals__)
                    continue
                rec.append((f, orig, new))
        # Code that runs now (a module body stopped at its first line, a function) goes on to
        # define functions from its constants: those run patched code too.
        for code in live:
            if code not in self.made:
                self._patch_consts(code, canon, lines, done)
        self._arm_traced(None)
        for code, globals_ in live.items():
            self.m.tables.arm_traced(code, globals_)

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
                self.m.tables.rekeyed(code, lambda code=code, i=i, orig=orig: self.core.swap_const(code, i, orig))
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
