"""Execution control on sys.monitoring: arming breakpoints, slow-path callbacks, stops and steps."""
import os
import sys
import threading
from time import monotonic as _monotonic

from . import _breakpoints as bpmod
from . import _codepatch
from ._events import M
from . import _exceptions as excmod
from ._sources import getlines
from ._stepping import PKG_DIR, Stepping, frame_depth

E = M.events
TOOL = M.DEBUGGER_ID
DISABLE = M.DISABLE
BASE_EVENTS = E.PY_START | E.PY_RESUME
_PYCORE = PKG_DIR + "_pycore.py"


def load_core():
    try:
        from . import _strata_core as core
    except ImportError:
        if os.environ.get("STRATA_REQUIRE_CORE"):
            raise
        from . import _pycore as core
    return core


def _main_pending():
    """The main script, where the agent started before the interpreter ran it (a rank's
    sitecustomize): no exec audit event announces its code."""
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__file__", None):
        return None
    argv0 = sys.argv[0] if sys.argv else ""
    if not argv0 or argv0.startswith("-") or not os.path.isfile(argv0):
        return None
    return bpmod.canon(argv0)


def _library_prefixes():
    """The standard library and site-packages folders (sysconfig is too slow to import)."""
    out = {os.path.normcase(os.path.dirname(os.path.abspath(os.__file__))) + os.sep}
    for p in sys.path:
        if p.endswith(("site-packages", "dist-packages")):
            out.add(os.path.normcase(os.path.abspath(p)) + os.sep)
    return tuple(out)


def _caught_by_runtime(exc, frame):
    """Exceptions that C code (for loops, generators, attribute fallback) consumes
    without any handler in a code object's exception table."""
    if isinstance(exc, (StopIteration, StopAsyncIteration, GeneratorExit)):
        return True
    if isinstance(exc, SystemExit) and exc.code in (None, 0):
        return True
    return isinstance(exc, AttributeError) and frame.f_code.co_name in ("__getattr__", "__getattribute__")


class ThreadState:
    __slots__ = ("ident", "tid", "name", "frame", "reason", "step", "run_epoch", "exc",
                 "exc_mode", "exc_text", "parked", "last_exc", "busy")

    def __init__(self, ident, tid, name):
        self.ident, self.tid, self.name = ident, tid, name
        self.frame = self.reason = self.step = self.exc = self.exc_mode = self.exc_text = None
        self.run_epoch = -1
        self.parked = False
        self.last_exc = 0
        # Set while agent code runs on this thread outside a callback (strata.breakpoint()),
        # where sys.monitoring would otherwise report the agent's own lines.
        self.busy = False


class Monitor(Stepping):
    def __init__(self, agent):
        self.agent = agent
        self._core = None
        self.codes = {}
        self.files = {}
        self.funcnames = set()
        self.log_queue = []
        self.path_bps = {}
        self.line_bps = {}
        self.func_bps = []
        self.pending_bps = {}
        self.exc_filters = {}
        self.cuda_errors = True  # the `cuda` filter, on by default
        self.cond = threading.Condition(threading.RLock())
        self.threads = {}
        self.internal = set()
        self.epoch = 0
        self.halt = False
        self.pause_requested = False
        self.stopped_ident = None
        self.active = False
        self.installed = False
        self.just_my_code = True
        self._events = 0
        self._stepping = False
        self._instr_codes = set()
        self._user_cache = {}
        self._lib = _library_prefixes()
        self._unparked = {}  # ident -> epoch in which it did not park when asked
        self.patcher = None  # 3.11: line breakpoints written into code (_codepatch.py)

    @property
    def core(self):
        # Loaded on first use (a client connecting), off the program's start-up path.
        if self._core is None:
            self._core = load_core()
        return self._core

    # ---- installation -------------------------------------------------------------
    def install(self):
        if self.installed:
            return
        try:
            M.use_tool_id(TOOL, "strata")
        except ValueError:
            what = ("sys.monitoring tool id {} (DEBUGGER_ID)".format(TOOL) if M is getattr(sys, "monitoring", None)
                    else "the trace hook (sys.settrace)")
            raise RuntimeError(f"{what} is already held by {M.get_tool(TOOL)!r}; "
                               f"Strata cannot debug this process") from None
        c = self.core
        c.configure(self.codes, self.files, self.funcnames, self._on_start, self._on_line,
                    self.log_queue, DISABLE)
        c.set_internal_threads(sorted(i for i in self.internal if i is not None), PKG_DIR)
        M.register_callback(TOOL, E.PY_START, c.py_start)
        M.register_callback(TOOL, E.PY_RESUME, c.py_start)
        M.register_callback(TOOL, E.LINE, c.line)
        M.register_callback(TOOL, E.JUMP, c.jump)
        M.register_callback(TOOL, E.RAISE, self._on_raise)
        M.register_callback(TOOL, E.PY_RETURN, self._on_return)
        M.register_callback(TOOL, E.PY_YIELD, self._on_return)
        M.register_callback(TOOL, E.INSTRUCTION, self._on_instruction)
        c.set_native_step_hook(self.arm_native_step)
        if _codepatch.SUPPORTED and hasattr(c, "patch_setup") and not os.environ.get("STRATA_NO_CODEPATCH"):
            self.patcher = _codepatch.Patcher(self, c)
            self.patcher.main_pending = _main_pending()
        self.installed = True
        self.active = True
        self._events = 0
        self._update_events()

    def uninstall(self):
        """Removes every trace of instrumentation and lets every parked thread run."""
        with self.cond:
            self.active = False
            self.halt = False
            self.pause_requested = False
            self.stopped_ident = None
            for ts in self.threads.values():
                ts.step = None
            self.cond.notify_all()
        if self.patcher is not None:
            self.patcher.revert_all()
            self.patcher = None
        if self.installed:
            try:
                M.set_events(TOOL, 0)
                for code in set(self.codes) | self._instr_codes:
                    M.set_local_events(TOOL, code, 0)
                for ev in (E.PY_START, E.PY_RESUME, E.LINE, E.JUMP, E.RAISE, E.PY_RETURN,
                           E.PY_YIELD, E.INSTRUCTION):
                    M.register_callback(TOOL, ev, None)
                M.free_tool_id(TOOL)
            except ValueError:
                pass
            self.core.reset()
            self.installed = False
        self.codes.clear()
        self.files.clear()
        self.funcnames.clear()
        self.path_bps.clear()
        self.line_bps.clear()
        self.pending_bps.clear()
        self.func_bps = []
        self.exc_filters = {}
        self._events = 0
        self._stepping = False
        self._instr_codes = set()

    def _update_events(self):
        if not self.installed:
            return
        ev = 0
        # Where breakpoints are written into code (3.11), files with line breakpoints need no
        # start events: only function breakpoints, files not found yet and a main script the
        # interpreter is yet to run do.
        if self.funcnames or (self.files and (self.patcher is None or self.pending_bps
                                              or self.patcher.needs_start_events())):
            ev |= BASE_EVENTS
        if self.exc_filters:
            ev |= E.RAISE
        step = any(ts.step is not None for ts in list(self.threads.values()))
        stepping = self.halt or self.pause_requested or step
        if stepping:
            ev |= E.LINE | E.JUMP
        if step:
            # Return events cost a Python call each, so only a step in progress gets them.
            ev |= E.PY_RETURN | E.PY_YIELD
        self.core.set_step_mode(1 if stepping else 0)
        if ev != self._events:
            M.set_events(TOOL, ev)
            self._events = ev
        if stepping and not self._stepping:
            # Lines that returned DISABLE must report again while a thread steps or parks.
            M.restart_events()
        self._stepping = stepping

    # ---- breakpoints ----------------------------------------------------------------
    def set_breakpoints(self, path, specs, source_text=None):
        canon = bpmod.canon(path)
        new = []
        for s in specs:
            bp = bpmod.Breakpoint(path, int(s.get("line", 0)), s.get("condition"),
                                  s.get("hitCondition"), s.get("logMessage"))
            if bp.error:
                bp.message = bp.error
            else:
                line, msg = bpmod.resolve_line(path, bp.requested_line, source_text)
                if line is None:
                    bp.message = msg
                else:
                    bp.line, bp.verified = line, True
            new.append(bp)
        with self.cond:
            if new:
                self.path_bps[canon] = new
            else:
                self.path_bps.pop(canon, None)
            table = {}
            for bp in new:
                if bp.verified:
                    table.setdefault(bp.line, []).append(bp)
            if table:
                self.line_bps[canon] = table
            else:
                self.line_bps.pop(canon, None)
            # A file that does not exist yet (generated, exec'd) is looked at again when
            # its code first runs; the client then gets a 'breakpoint' changed event.
            pending = [b for b in new if not b.verified and not b.error
                       and (b.message or "").startswith("file not found")]
            if pending:
                self.pending_bps[canon] = pending
            else:
                self.pending_bps.pop(canon, None)
            old_keys = {k for k, v in self.files.items() if v == canon}
            self._refresh_files()
            for code in [c for c in self.codes if c.co_filename in old_keys
                         or bpmod.canon(c.co_filename) == canon]:
                del self.codes[code]
                M.set_local_events(TOOL, code, 0)
            self._arm_running(canon)
            if self.patcher is not None:
                self.patcher.apply(canon)
            self._update_events()
            M.restart_events()
        return new

    def _refresh_files(self):
        self.files.clear()
        for canon in self.pending_bps:
            self.files[canon] = canon
        for canon in self.line_bps:
            self.files[canon] = canon
            real = os.path.realpath(canon)
            self.files[real] = canon
        if not self.line_bps:
            return
        # realpath's lstat calls each release the GIL, and a busy thread then keeps it for a
        # switch interval (5 ms): only files named like a breakpoint's file are resolved.
        by_name = {}
        for canon in self.line_bps:
            by_name.setdefault(os.path.basename(canon), []).append(canon)
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if isinstance(f, str) and f not in self.files:
                c = bpmod.canon(f)
                if c in self.line_bps:
                    self.files[f] = c
                elif os.path.basename(f) in by_name:
                    r = os.path.realpath(f)
                    for canon in by_name[os.path.basename(f)]:
                        if os.path.realpath(canon) == r:
                            self.files[f] = canon

    def _arm_running(self, canon):
        for top in sys._current_frames().values():
            f = top
            while f is not None:
                fn = f.f_code.co_filename
                if fn not in self.files and bpmod.canon(fn) == canon:
                    self.files[fn] = canon
                if self.files.get(fn) == canon:
                    # A running frame keeps the code it runs: only events reach it.
                    self._arm_code(f.f_code, f.f_globals, traced=True)
                f = f.f_back

    def rekeyed(self, code, change):
        """Runs change(), which alters `code`'s hash (its constants), with `code` out of every
        table it is a key of, and puts it back."""
        table = self.codes.pop(code, None)
        traced = table is not None and not (self.patcher and self.patcher.owns(code))
        if traced:
            M.set_local_events(TOOL, code, 0)
        change()
        if table is not None:
            self.codes[code] = table
            if traced:
                M.set_local_events(TOOL, code, E.LINE | E.JUMP)

    def arm_traced(self, code, globals_):
        """Armed through events (the traced way): for code the patcher could not write into."""
        self._arm_code(code, globals_, traced=True)

    def arm_patched(self, code, globals_):
        # On the program's thread, at the code's first call: the tables are the agent thread's too.
        with self.cond:
            self._arm_code(code, globals_, traced=False)

    def prepare_main(self, code):
        """The main script's code before the agent runs it: with breakpoints written in (3.11)."""
        if self.patcher is None or not self.installed:
            return code
        with self.cond:
            canon = self.files.get(code.co_filename)
            if canon is None:
                return code
            new = self.patcher.patch_main(code, canon)
            self._update_events()
            return new

    def _arm_code(self, code, globals_, traced=None):
        canon = self.files.get(code.co_filename)
        table_bps = self.line_bps.get(canon) if canon else None
        if not table_bps:
            return
        lines = bpmod.code_lines(code)
        table = {}
        for line, bps in table_bps.items():
            if line in lines:
                table[line] = bps[0].make_entry(code, globals_) if len(bps) == 1 else (
                    bpmod.KIND_SLOW, None, (), bps[0])
        if table:
            self.codes[code] = table
            if traced is None:
                traced = self.patcher is None or not self.patcher.owns(code)
            if traced:
                M.set_local_events(TOOL, code, E.LINE | E.JUMP)

    def set_function_breakpoints(self, specs):
        new = []
        for s in specs:
            name = str(s.get("name", "")).strip()
            bp = bpmod.Breakpoint(None, None, s.get("condition"), s.get("hitCondition"),
                                  func_name=name)
            if not name or not all(p.isidentifier() for p in name.split(".")):
                bp.message = f"invalid function name {name!r}"
            elif bp.error:
                bp.message = bp.error
            else:
                bp.verified = True
            new.append(bp)
        with self.cond:
            self.func_bps = [b for b in new if b.verified]
            self.funcnames.clear()
            self.funcnames.update(b.func_name.rsplit(".", 1)[-1] for b in self.func_bps)
            self._update_events()
            M.restart_events()
        return new

    def set_exception_filters(self, filters, options):
        chosen = {}
        errors = {}
        cuda = excmod.CUDA_FILTER in filters
        for f in filters:
            if f in excmod.RAISE_NAMES:
                chosen[f] = set()
        for opt in options or ():
            f = opt.get("filterId")
            if f == excmod.CUDA_FILTER:
                if opt.get("condition"):
                    errors[f] = "conditions on the CUDA errors filter are not supported"
                else:
                    cuda = True
                continue
            if f not in excmod.RAISE_NAMES:
                continue
            try:
                chosen[f] = excmod.parse_type_condition(opt.get("condition", ""))
            except ValueError as e:
                errors[f] = str(e)
                chosen.pop(f, None)
        with self.cond:
            self.exc_filters = chosen
            self.cuda_errors = cuda
            self._update_events()
        return errors

    # ---- helpers --------------------------------------------------------------------
    def is_user(self, frame):
        fn = frame.f_code.co_filename
        got = self._user_cache.get(fn)
        if got is None:
            # <strata-gpu-hooks>: the GPU collector's wrapper around torch's autograd engine.
            if fn.startswith(PKG_DIR) or fn.startswith("<frozen") or fn.startswith("<strata-gpu"):
                got = False
            elif fn.startswith("<"):
                return self._generated_is_user(frame)
            else:
                c = os.path.normcase(os.path.abspath(fn))
                got = not (self.just_my_code and c.startswith(self._lib))
            self._user_cache[fn] = got
        return got

    def _generated_is_user(self, frame):
        """Code without a file ('<string>': exec, eval, -c) belongs to whoever runs it: the
        library's namedtuple and dataclass methods are the library's, the program's exec and
        a -c script are the program's."""
        if not self.just_my_code:
            return True
        f = frame.f_back
        while f is not None:
            if self._is_launcher(f):
                return True
            fn = f.f_code.co_filename
            if not fn.startswith("<") or fn.startswith("<frozen"):
                return self.is_user(f)
            f = f.f_back
        return True

    def is_internal_frame(self, frame):
        return frame.f_code.co_filename.startswith(PKG_DIR)

    def _is_boundary(self, frame):
        code = frame.f_code
        if code.co_filename.startswith(PKG_DIR):
            return True
        return code.co_name in ("_bootstrap_inner", "_bootstrap") and code.co_filename.endswith("threading.py")

    def _is_launcher(self, frame):
        fn = frame.f_code.co_filename
        return fn.startswith(PKG_DIR) or fn == "<frozen runpy>" or fn.endswith(os.sep + "runpy.py")

    def _user_frame(self):
        """The frame the event is about, or None when it is the agent's own code."""
        f = sys._getframe(2)
        while f is not None and f.f_code.co_filename == _PYCORE:
            f = f.f_back
        if f is None or f.f_code.co_filename.startswith(PKG_DIR):
            return None
        return f

    def thread(self, ident):
        ts = self.threads.get(ident)
        # Thread idents are reused as soon as a thread ends; the OS id tells them apart.
        if ts is None or ts.tid != threading.get_native_id():
            cur = threading.current_thread()
            ts = ThreadState(ident, threading.get_native_id(), cur.name)
            ts.run_epoch = self.epoch if not self.halt else -1
            self.threads[ident] = ts
        return ts

    def forget_dead_threads(self, alive_idents):
        with self.cond:
            for ident in [i for i, ts in self.threads.items() if i not in alive_idents and not ts.parked]:
                del self.threads[ident]

    def output(self, text, bp=None, category="console"):
        self.log_queue.append((bp, text if category == "console" else (category, text)))

    # ---- callbacks (slow paths) -------------------------------------------------------
    def _on_start(self, code, offset=0):
        result = DISABLE
        frame = self._user_frame()
        if frame is None:
            return result
        if code.co_name in self.funcnames:
            mod = frame.f_globals.get("__name__")
            hits = [bp for bp in self.func_bps if bpmod.func_bp_matches(bp.func_name, code, mod, frame)]
            if hits:
                result = None
                ident = threading.get_ident()
                if offset == 0 and ident not in self.internal and self.active:
                    ids = [bp.id for bp in hits if self._bp_acts(bp, frame, 0)]
                    if ids:
                        self.stop(self.thread(ident), frame, "function breakpoint", ids=ids)
        if code.co_filename in self.files and code not in self.codes:
            canon = self.files[code.co_filename]
            if self.pending_bps.get(canon):
                self._resolve_pending(canon)
            if self.patcher is not None and code.co_name == "<module>" and not self.patcher.owns(code):
                # A module body the patcher did not see coming (a main script the interpreter
                # runs itself): the functions it defines get the patched code.
                self.patcher.module_started(code, canon, frame.f_globals)
                self._update_events()
            else:
                self._arm_code(code, frame.f_globals)
        return result

    def _resolve_pending(self, canon):
        with self.cond:
            pending = self.pending_bps.get(canon) or []
            still = []
            for bp in pending:
                text = None
                if not os.path.exists(bp.path):
                    text = "".join(getlines(bp.path)) or None
                    if text is None:
                        still.append(bp)
                        continue
                line, msg = bpmod.resolve_line(bp.path, bp.requested_line, text)
                if line is None:
                    bp.message = msg
                else:
                    bp.line, bp.verified, bp.message = line, True, None
                    self.line_bps.setdefault(canon, {}).setdefault(line, []).append(bp)
                self.agent.send_event("breakpoint", {"reason": "changed", "breakpoint": bp.to_dap()})
            if still:
                self.pending_bps[canon] = still
            else:
                self.pending_bps.pop(canon, None)

    def _on_line(self, code, line, status=0):
        ident = threading.get_ident()
        if ident in self.internal or not self.active:
            return None
        frame = self._user_frame()
        if frame is None:
            return None
        ts = self.thread(ident)
        if ts.busy:
            return None
        canon = self.files.get(code.co_filename)
        bps = None
        if canon is not None:
            table = self.line_bps.get(canon)
            if table:
                bps = table.get(line)
        if bps:
            ids = [bp.id for bp in bps if self._bp_acts(bp, frame, status)]
            if ids:
                self.stop(ts, frame, "breakpoint", ids=ids)
                return None
        if ts.step is not None and self._mixed_step_taken(ts) and self._step_done(ts, frame):
            self.stop(ts, frame, "entry" if ts.step[0] == "entry" else "step")
            return None
        if self.pause_requested and self.is_user(frame):
            self.stop(ts, frame, "pause")
        elif self.halt and ts.run_epoch != self.epoch:
            self._park(ts, frame)
        if bps or self.core.step_mode():
            return None
        return DISABLE

    def _bp_acts(self, bp, frame, status):
        if bp.cond_code is not None and status != 1:
            try:
                ok = eval(bp.cond_code, frame.f_globals, frame.f_locals)
            except Exception as e:
                bp.hits += 1
                self.output(f"Breakpoint condition {bp.condition!r} raised "
                            f"{type(e).__name__}: {e}; stopping\n", bp)
                return True
            if not ok:
                return False
        if not bp.count_hit():
            return False
        if bp.log_code is not None:
            self.log_queue.append((bp, bp.format_log(frame)))
            return False
        return True

    def _on_raise(self, code, offset, exc):
        ident = threading.get_ident()
        if ident in self.internal or not self.active or not self.exc_filters:
            return None
        frame = sys._getframe(1)
        if frame.f_code.co_filename.startswith(PKG_DIR):
            return None
        ts = self.thread(ident)
        if ts.busy:
            return None
        tb = exc.__traceback__
        # RAISE fires again in every frame the exception unwinds into; only the first counts.
        # A fresh raise has a one-entry traceback (ids alone get reused by the allocator).
        if tb is not None and tb.tb_next is not None and ts.last_exc == id(exc):
            return None
        user = self.is_user(frame)
        if not user:
            return None
        ts.last_exc = id(exc)
        f = self.exc_filters
        t = type(exc)
        mode = None
        if "raised" in f and excmod.type_matches(t, f["raised"]):
            mode = "always"
        elif ("uncaught" in f or "userUnhandled" in f) and not _caught_by_runtime(exc, frame):
            catcher = excmod.find_catcher(frame, exc, self._is_boundary)
            if catcher is None and "uncaught" in f and excmod.type_matches(t, f["uncaught"]):
                mode = "unhandled"
            elif (catcher is not None and "userUnhandled" in f and not self.is_user(catcher)
                  and excmod.type_matches(t, f["userUnhandled"])):
                mode = "userUnhandled"
        if mode is None:
            return None
        name, msg = excmod.describe(exc)
        ts.exc, ts.exc_mode = exc, mode
        ts.exc_text = excmod.traceback_text(frame, exc, self._is_launcher)
        self.stop(ts, frame, "exception", description=f"{name}: {msg}" if msg else name,
                  text=name)
        ts.exc = None
        return None

    # ---- stopping and resuming ----------------------------------------------------------
    def _wait_turn(self, ts, frame):
        while self.active and self.halt and ts.run_epoch != self.epoch:
            self.cond.wait(1.0)

    def _park(self, ts, frame):
        # Marked before taking the lock, so a stack request never shows threading's frames.
        ts.frame, ts.parked = frame, True
        try:
            with self.cond:
                self.cond.notify_all()  # a request may be waiting for this thread to park
                self._wait_turn(ts, frame)
        finally:
            ts.parked, ts.frame = False, None

    def stop(self, ts, frame, reason, ids=None, description=None, text=None, explicit=False):
        ts.frame, ts.parked = frame, True
        try:
            with self.cond:
                self._wait_turn(ts, frame)
                if not self.active:
                    return
                # A pause already answered by another thread's stop is not repeated.
                if reason == "pause" and not self.pause_requested and not explicit:
                    return
                self.pause_requested = False
                self.epoch += 1
                self.halt = True
                self.stopped_ident = ts.ident
                ts.step = None
                ts.reason = reason
                if self._instr_codes:
                    self._drop_instruction_events()
                self._update_events()
                body = {"reason": reason, "threadId": ts.tid, "allThreadsStopped": True}
                if ids:
                    body["hitBreakpointIds"] = ids
                if description:
                    body["description"] = description
                if text:
                    body["text"] = text
                self.agent.flush_logs()
                self.agent.send_event("stopped", body)
                self._wait_turn(ts, frame)
        finally:
            ts.parked, ts.frame = False, None

    def request_pause(self):
        with self.cond:
            if self.halt or not self.active:
                return
            self.pause_requested = True
            self._update_events()

    def request_entry(self, ident, code=None):
        """Stops thread ident at the first line of code (of any user code without one)."""
        with self.cond:
            self.thread(ident).step = ("entry", code, 0)
            self._update_events()

    def resume(self, ident=None, single=False, step=None):
        """Lets threads run; with step, thread `ident` stops again where the step ends."""
        with self.cond:
            ts = self.threads.get(ident) if ident is not None else None
            if step and ts is not None and ts.frame is not None:
                ts.step = (step, ts.frame, frame_depth(ts.frame))
                self.core.mixed_step_clear(ts.tid)
            # A pause nobody answered yet (every thread in C) is dropped by a resume.
            self.pause_requested = False
            if single and ts is None and ident is not None:
                # A thread still in C when the others stopped: it has no state yet, and
                # running it alone must not let the others go.
                t = threading._active.get(ident)
                if t is not None and t.native_id is not None:
                    ts = self.threads[ident] = ThreadState(ident, t.native_id, t.name)
            if single and ts is not None:
                ts.run_epoch = self.epoch
            else:
                self.halt = False
                self.stopped_ident = None
            self._update_events()
            self.cond.notify_all()

    def arm_native_step(self, tid):
        """Mixed mode, from the pending call the native debugger queues (strata_mixed_pending in
        the core) for a step that leaves C/C++ code no Python step led into: thread `tid` stops
        at its next Python line of user code (its Python caller, at the call, or the first line
        of a Python callback), as the native debugger steers it meanwhile (held over a C++
        `next`). Nothing when the step was dropped meanwhile (a continue)."""
        mode = self.core.mixed_step(tid)
        if mode == 2:
            return
        with self.cond:
            if not self.active:
                return
            ts = next((t for t in self.threads.values() if t.tid == tid), None)
            if ts is not None and ts.step is not None:
                return
            if ts is None:
                t = next((t for t in threading.enumerate() if t.native_id == tid), None)
                if t is None:
                    return
                ts = self.threads[t.ident] = ThreadState(t.ident, tid, t.name)
                ts.run_epoch = self.epoch
            ts.step = ("in", None, 0)
            if mode == 3:
                self.core.mixed_step_clear(tid)
            self._update_events()

    def wait_parked(self, ident, timeout):
        """While stopped, gives a thread that is still running Python code (it parks at its next
        line, once it gets the GIL) a moment to park, so its frames stop moving before they are
        shown. A thread blocked in C never parks: it is waited for once per stop."""
        with self.cond:
            if not self.halt or not self.active or self._unparked.get(ident) == self.epoch:
                return
            ts = self.threads.get(ident)
            if ts is not None and ts.parked:
                return
            deadline = _monotonic() + timeout
            while self.halt and self.active and not (ts is not None and ts.parked):
                left = deadline - _monotonic()
                if left <= 0:
                    self._unparked[ident] = self.epoch
                    return
                self.cond.wait(left)
                ts = self.threads.get(ident)

    def parked_frame(self, ident):
        ts = self.threads.get(ident)
        if ts is not None and ts.parked and ts.frame is not None:
            return ts.frame
        return None
