"""Where a step ends: the decisions the monitor's line, return and instruction callbacks make for
a thread that steps, and, in mixed mode, what the native debugger said of that step."""
import os
import sys
import threading

from ._events import M

E = M.events
TOOL = M.DEBUGGER_ID
PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def frame_depth(f):
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


class Stepping:
    """Mixed into Monitor (which has threads, cond, core, codes, _instr_codes, is_user, stop and
    _update_events)."""

    def _mixed_step_taken(self, ts):
        """Mixed mode: what the native debugger said of this thread's step while it ran C/C++
        code (strata_mixed_steps in the core): held lines run on; a dropped step ends here."""
        mode = self.core.mixed_step(ts.tid)
        if mode == 2:
            with self.cond:
                ts.step = None
                self.core.mixed_step_clear(ts.tid)
                self._update_events()
        return mode in (0, 3)

    def _step_done(self, ts, frame):
        mode, sframe, sdepth = ts.step
        user = self.is_user(frame)
        if mode == "entry" and sframe is not None:
            return frame.f_code is sframe
        if mode in ("entry", "in"):
            return user
        depth = frame_depth(frame)
        if mode in ("over", "return") and frame is sframe:
            return user
        if depth < sdepth:
            if user:
                return True
            ts.step = ("in", None, 0)
        return False

    def _on_return(self, code, offset, retval):
        """The frame a step started in returns: the step ends in its caller, at the call."""
        ts = self.threads.get(threading.get_ident())
        if ts is None or ts.busy or ts.step is None or ts.step[0] not in ("over", "in", "out"):
            return None
        frame = sys._getframe(1)
        if frame is not ts.step[1]:
            return None
        caller = frame.f_back
        if caller is None or caller.f_code.co_filename.startswith(PKG_DIR) or not self.is_user(caller):
            ts.step = ("in", None, 0)
            return None
        ts.step = ("return", caller, frame_depth(caller))
        # The next instruction the caller runs is the return point; LINE would only come
        # at its next line.
        self._instr_codes.add(caller.f_code)
        M.set_local_events(TOOL, caller.f_code,
                           E.INSTRUCTION | (E.LINE | E.JUMP if caller.f_code in self.codes else 0))
        return None

    def _on_instruction(self, code, offset):
        ts = self.threads.get(threading.get_ident())
        if ts is None or ts.busy or ts.step is None or ts.step[0] != "return":
            return None
        frame = sys._getframe(1)
        if frame is ts.step[1]:
            self.stop(ts, frame, "step")
        return None

    def _drop_instruction_events(self):
        for code in self._instr_codes:
            M.set_local_events(TOOL, code, E.LINE | E.JUMP if code in self.codes else 0)
        self._instr_codes.clear()
