"""The monitor: the tables and flags the event callbacks read, the callbacks' slow paths (a code
object starting, a line with a breakpoint or reached while stepping or stopped, an exception
raised), installation and removal.

Each job is an object of its own, handed the monitor, which holds the state they share under
its lock (cond):
- tables (_bptables.BreakpointTables): the client's breakpoints turned into codes, files,
  funcnames, line_bps, pending_bps, func_bps and exc_filters;
- events (_arming.Events): sys.monitoring's tool, callbacks and events;
- parking (_parking.Parking): stops, pause, resume, and threads parked while stopped;
- stepper (_stepping.Stepper): where a step ends;
- user (_usercode.UserCode): justMyCode.
The callbacks read this state as the monitor's own attributes, and call the methods they need
through attributes bound here, so that a callback pays no more lookups than one class would."""
import os
import sys
import threading

from . import _breakpoints as bpmod
from . import _exceptions as excmod
from ._arming import DISABLE, Events
from ._bptables import BreakpointTables
from ._parking import Parking, ThreadState
from ._stepping import Stepper
from ._usercode import PKG_DIR, UserCode, is_boundary, is_launcher

_PYCORE = PKG_DIR + "_pycore.py"


def load_core():
    try:
        from . import _strata_core as core
    except ImportError:
        if os.environ.get("STRATA_REQUIRE_CORE"):
            raise
        from . import _pycore as core
    return core


class Monitor:
    def __init__(self, agent):
        self.agent = agent
        self._core = None
        # The tables (written by self.tables, read by the core and the callbacks).
        self.codes = {}
        self.files = {}
        self.funcnames = set()
        self.log_queue = []
        self.line_bps = {}
        self.func_bps = []
        self.pending_bps = {}
        self.exc_filters = {}
        self.cuda_errors = True  # the `cuda` filter, on by default
        # Threads and the stop (written by self.parking, read by the callbacks).
        self.cond = threading.Condition(threading.RLock())
        self.threads = {}
        self.internal = set()
        self.epoch = 0
        self.halt = False
        self.pause_requested = False
        self.stopped_ident = None
        self.active = False
        self.installed = False
        self.patcher = None  # 3.11: line breakpoints written into code (_codepatch.py)
        self.user = UserCode()
        self.is_user = self.user.is_user
        self.events = Events(self)
        self.tables = BreakpointTables(self)
        self.parking = Parking(self)
        self.stop = self.parking.stop
        self._park = self.parking.park
        self.stepper = Stepper(self)
        self._step_done = self.stepper.step_done
        self._mixed_step_taken = self.stepper.mixed_step_taken
        self._resolve_pending = self.tables.resolve_pending
        self._arm_code = self.tables.arm_code

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
        self.events.take_tool()
        c = self.core
        self.stepper.core = c
        c.configure(self.codes, self.files, self.funcnames, self._on_start, self._on_line,
                    self.log_queue, DISABLE)
        c.set_internal_threads(sorted(i for i in self.internal if i is not None), PKG_DIR)
        self.events.register_callbacks(c, self.stepper)
        c.set_native_step_hook(self.parking.arm_native_step)
        self.patcher = self.events.make_patcher(c)
        self.installed = True
        self.active = True
        self.events.mask = 0
        self.events.update()

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
            self.events.unregister()
            self.core.reset()
            self.installed = False
        self.tables.clear()
        self.events.reset()

    # ---- threads and output ---------------------------------------------------------------
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

    def _user_frame(self):
        """The frame the event is about, or None when it is the agent's own code."""
        f = sys._getframe(2)
        while f is not None and f.f_code.co_filename == _PYCORE:
            f = f.f_back
        if f is None or f.f_code.co_filename.startswith(PKG_DIR):
            return None
        return f

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
                self.events.update()
            else:
                self._arm_code(code, frame.f_globals)
        return result

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
        elif ("uncaught" in f or "userUnhandled" in f) and not excmod.caught_by_runtime(exc, frame):
            catcher = excmod.find_catcher(frame, exc, is_boundary)
            if catcher is None and "uncaught" in f and excmod.type_matches(t, f["uncaught"]):
                mode = "unhandled"
            elif (catcher is not None and "userUnhandled" in f and not self.is_user(catcher)
                  and excmod.type_matches(t, f["userUnhandled"])):
                mode = "userUnhandled"
        if mode is None:
            return None
        name, msg = excmod.describe(exc)
        ts.exc, ts.exc_mode = exc, mode
        ts.exc_text = excmod.traceback_text(frame, exc, is_launcher)
        self.stop(ts, frame, "exception", description=f"{name}: {msg}" if msg else name,
                  text=name)
        ts.exc = None
        return None
