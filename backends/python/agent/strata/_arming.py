"""Arming sys.monitoring (or, on 3.10/3.11, the core's trace function behind the same interface):
the tool id and its callbacks, the global events the monitor's tables and stops call for, the
local events of armed code, and the instruction events of a step's return point.

Events is handed the monitor, whose tables (codes, files, funcnames, pending_bps, exc_filters,
threads) and flags (halt, pause_requested) say what must be armed; it owns only what it armed."""
import os
import sys

from . import _codepatch
from . import _breakpoints as bpmod
from ._events import M

E = M.events
TOOL = M.DEBUGGER_ID
DISABLE = M.DISABLE
BASE_EVENTS = E.PY_START | E.PY_RESUME
CODE_EVENTS = E.LINE | E.JUMP
ALL_CALLBACKS = (E.PY_START, E.PY_RESUME, E.LINE, E.JUMP, E.RAISE, E.PY_RETURN, E.PY_YIELD,
                 E.INSTRUCTION)


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


class Events:
    def __init__(self, monitor):
        self.m = monitor
        self.mask = 0            # the global events set now
        self.stepping = False    # whether line events are on for a step, pause or stop
        self.instr_codes = set()  # codes with instruction events (a step's return point)

    # ---- the tool and its callbacks ---------------------------------------------------------
    def take_tool(self):
        """Takes the debugger's tool id; raises RuntimeError when another tool holds it."""
        try:
            M.use_tool_id(TOOL, "strata")
        except ValueError:
            what = ("sys.monitoring tool id {} (DEBUGGER_ID)".format(TOOL) if M is getattr(sys, "monitoring", None)
                    else "the trace hook (sys.settrace)")
            raise RuntimeError(f"{what} is already held by {M.get_tool(TOOL)!r}; "
                               f"Strata cannot debug this process") from None

    def register_callbacks(self, core, stepper):
        """Every event goes to the core (starts, lines) or to a Python callback."""
        m = self.m
        M.register_callback(TOOL, E.PY_START, core.py_start)
        M.register_callback(TOOL, E.PY_RESUME, core.py_start)
        M.register_callback(TOOL, E.LINE, core.line)
        M.register_callback(TOOL, E.JUMP, core.jump)
        M.register_callback(TOOL, E.RAISE, m._on_raise)
        M.register_callback(TOOL, E.PY_RETURN, stepper.on_return)
        M.register_callback(TOOL, E.PY_YIELD, stepper.on_return)
        M.register_callback(TOOL, E.INSTRUCTION, stepper.on_instruction)

    def make_patcher(self, core):
        """3.11: line breakpoints written into code (_codepatch.py), where the core can."""
        if _codepatch.SUPPORTED and hasattr(core, "patch_setup") and not os.environ.get("STRATA_NO_CODEPATCH"):
            patcher = _codepatch.Patcher(self.m, core)
            patcher.main_pending = _main_pending()
            return patcher
        return None

    def unregister(self):
        """Every event off, every callback gone, the tool id free."""
        m = self.m
        try:
            M.set_events(TOOL, 0)
            for code in set(m.codes) | self.instr_codes:
                M.set_local_events(TOOL, code, 0)
            for ev in ALL_CALLBACKS:
                M.register_callback(TOOL, ev, None)
            M.free_tool_id(TOOL)
        except ValueError:
            pass

    def reset(self):
        self.mask = 0
        self.stepping = False
        self.instr_codes = set()

    # ---- global events ------------------------------------------------------------------------
    def update(self):
        m = self.m
        if not m.installed:
            return
        ev = 0
        patcher = m.patcher
        # Where breakpoints are written into code (3.11), files with line breakpoints need no
        # start events: only function breakpoints, files not found yet and a main script the
        # interpreter is yet to run do.
        if m.funcnames or (m.files and (patcher is None or m.pending_bps
                                        or patcher.needs_start_events())):
            ev |= BASE_EVENTS
        if m.exc_filters:
            ev |= E.RAISE
        step = any(ts.step is not None for ts in list(m.threads.values()))
        stepping = m.halt or m.pause_requested or step
        if stepping:
            ev |= E.LINE | E.JUMP
        if step:
            # Return events cost a Python call each, so only a step in progress gets them.
            ev |= E.PY_RETURN | E.PY_YIELD
        m.core.set_step_mode(1 if stepping else 0)
        if ev != self.mask:
            M.set_events(TOOL, ev)
            self.mask = ev
        if stepping and not self.stepping:
            # Lines that returned DISABLE must report again while a thread steps or parks.
            M.restart_events()
        self.stepping = stepping

    @staticmethod
    def restart():
        """Lines and starts that returned DISABLE report again (the tables changed)."""
        M.restart_events()

    # ---- local events ------------------------------------------------------------------------
    @staticmethod
    def arm_code(code):
        M.set_local_events(TOOL, code, CODE_EVENTS)

    @staticmethod
    def disarm_code(code):
        M.set_local_events(TOOL, code, 0)

    def watch_return_point(self, code):
        """The next instruction `code` runs is where a step returned to (LINE would only come at
        its next line)."""
        self.instr_codes.add(code)
        M.set_local_events(TOOL, code, E.INSTRUCTION | (CODE_EVENTS if code in self.m.codes else 0))

    def drop_instruction_events(self):
        codes = self.m.codes
        for code in self.instr_codes:
            M.set_local_events(TOOL, code, CODE_EVENTS if code in codes else 0)
        self.instr_codes.clear()
