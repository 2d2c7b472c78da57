"""Where a step ends: the decisions the monitor's line callback makes for a thread that steps, the
return and instruction callbacks that find a step's return point, and, in mixed mode, what the
native debugger said of that step.

Stepper is handed the monitor; it keeps the monitor's thread table, its justMyCode test and its
stop as its own attributes, since its callbacks run on every return while a step is in
progress. The core is set by Monitor.install, before any callback can run."""
import sys
import threading

from ._usercode import PKG_DIR


def frame_depth(f):
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


class Stepper:
    def __init__(self, monitor):
        self.m = monitor
        self.threads = monitor.threads
        self.is_user = monitor.is_user
        self.stop = monitor.stop
        self.events = monitor.events
        self.core = None

    def mixed_step_taken(self, ts):
        """Mixed mode: what the native debugger said of this thread's step while it ran C/C++
        code (strata_mixed_steps in the core): held lines run on; a dropped step ends here."""
        core = self.core
        mode = core.mixed_step(ts.tid)
        if mode == 2:
            with self.m.cond:
                ts.step = None
                core.mixed_step_clear(ts.tid)
                self.events.update()
        return mode in (0, 3)

    def step_done(self, ts, frame):
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

    def on_return(self, code, offset, retval):
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
        self.events.watch_return_point(caller.f_code)
        return None

    def on_instruction(self, code, offset):
        ts = self.threads.get(threading.get_ident())
        if ts is None or ts.busy or ts.step is None or ts.step[0] != "return":
            return None
        frame = sys._getframe(1)
        if frame is ts.step[1]:
            self.stop(ts, frame, "step")
        return None
