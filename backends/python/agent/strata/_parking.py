"""Where threads park while the program is stopped: the stop itself (one thread reports it, the
others park at their next line until the client lets them run), pause, resume and steps asked
for, a thread handed a step by the native debugger (mixed mode), and the frames parked threads
show.

Parking is handed the monitor, which holds what its callbacks read on every line while stopped
(threads, epoch, halt, pause_requested, active) under its lock (cond); this object keeps only
the threads that did not park when asked (_unparked)."""
import threading
from time import monotonic as _monotonic

from ._stepping import frame_depth


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


class Parking:
    def __init__(self, monitor):
        self.m = monitor
        self._unparked = {}  # ident -> epoch in which it did not park when asked

    # ---- stopping ---------------------------------------------------------------------------
    def _wait_turn(self, ts):
        m = self.m
        while m.active and m.halt and ts.run_epoch != m.epoch:
            m.cond.wait(1.0)

    def park(self, ts, frame):
        # Marked before taking the lock, so a stack request never shows threading's frames.
        ts.frame, ts.parked = frame, True
        try:
            cond = self.m.cond
            with cond:
                cond.notify_all()  # a request may be waiting for this thread to park
                self._wait_turn(ts)
        finally:
            ts.parked, ts.frame = False, None

    def stop(self, ts, frame, reason, ids=None, description=None, text=None, explicit=False):
        m = self.m
        ts.frame, ts.parked = frame, True
        try:
            with m.cond:
                self._wait_turn(ts)
                if not m.active:
                    return
                # A pause already answered by another thread's stop is not repeated.
                if reason == "pause" and not m.pause_requested and not explicit:
                    return
                m.pause_requested = False
                m.epoch += 1
                m.halt = True
                m.stopped_ident = ts.ident
                ts.step = None
                ts.reason = reason
                events = m.events
                if events.instr_codes:
                    events.drop_instruction_events()
                events.update()
                body = {"reason": reason, "threadId": ts.tid, "allThreadsStopped": True}
                if ids:
                    body["hitBreakpointIds"] = ids
                if description:
                    body["description"] = description
                if text:
                    body["text"] = text
                m.agent.flush_logs()
                m.agent.send_event("stopped", body)
                self._wait_turn(ts)
        finally:
            ts.parked, ts.frame = False, None

    # ---- what the client asks for ------------------------------------------------------------
    def request_pause(self):
        m = self.m
        with m.cond:
            if m.halt or not m.active:
                return
            m.pause_requested = True
            m.events.update()

    def request_entry(self, ident, code=None):
        """Stops thread ident at the first line of code (of any user code without one)."""
        m = self.m
        with m.cond:
            m.thread(ident).step = ("entry", code, 0)
            m.events.update()

    def resume(self, ident=None, single=False, step=None):
        """Lets threads run; with step, thread `ident` stops again where the step ends."""
        m = self.m
        with m.cond:
            ts = m.threads.get(ident) if ident is not None else None
            if step and ts is not None and ts.frame is not None:
                ts.step = (step, ts.frame, frame_depth(ts.frame))
                m.core.mixed_step_clear(ts.tid)
            # A pause nobody answered yet (every thread in C) is dropped by a resume.
            m.pause_requested = False
            if single and ts is None and ident is not None:
                # A thread still in C when the others stopped: it has no state yet, and
                # running it alone must not let the others go.
                t = threading._active.get(ident)
                if t is not None and t.native_id is not None:
                    ts = m.threads[ident] = ThreadState(ident, t.native_id, t.name)
            if single and ts is not None:
                ts.run_epoch = m.epoch
            else:
                m.halt = False
                m.stopped_ident = None
            m.events.update()
            m.cond.notify_all()

    def arm_native_step(self, tid):
        """Mixed mode, from the pending call the native debugger queues (strata_mixed_pending in
        the core) for a step that leaves C/C++ code no Python step led into: thread `tid` stops
        at its next Python line of user code (its Python caller, at the call, or the first line
        of a Python callback), as the native debugger steers it meanwhile (held over a C++
        `next`). Nothing when the step was dropped meanwhile (a continue)."""
        m = self.m
        mode = m.core.mixed_step(tid)
        if mode == 2:
            return
        with m.cond:
            if not m.active:
                return
            ts = next((t for t in m.threads.values() if t.tid == tid), None)
            if ts is not None and ts.step is not None:
                return
            if ts is None:
                t = next((t for t in threading.enumerate() if t.native_id == tid), None)
                if t is None:
                    return
                ts = m.threads[t.ident] = ThreadState(t.ident, tid, t.name)
                ts.run_epoch = m.epoch
            ts.step = ("in", None, 0)
            if mode == 3:
                m.core.mixed_step_clear(tid)
            m.events.update()

    # ---- what a stopped program shows ---------------------------------------------------------
    def wait_parked(self, ident, timeout):
        """While stopped, gives a thread that is still running Python code (it parks at its next
        line, once it gets the GIL) a moment to park, so its frames stop moving before they are
        shown. A thread blocked in C never parks: it is waited for once per stop."""
        m = self.m
        with m.cond:
            if not m.halt or not m.active or self._unparked.get(ident) == m.epoch:
                return
            ts = m.threads.get(ident)
            if ts is not None and ts.parked:
                return
            deadline = _monotonic() + timeout
            while m.halt and m.active and not (ts is not None and ts.parked):
                left = deadline - _monotonic()
                if left <= 0:
                    self._unparked[ident] = m.epoch
                    return
                m.cond.wait(left)
                ts = m.threads.get(ident)

    def parked_frame(self, ident):
        ts = self.m.threads.get(ident)
        if ts is not None and ts.parked and ts.frame is not None:
            return ts.frame
        return None
