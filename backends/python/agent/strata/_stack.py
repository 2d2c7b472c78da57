"""A stopped program's stacks as the client sees them: the frames of a thread (the program's
own, without the agent's and the launcher's), their ids, valid until the program runs again,
and their sources (a file, or a source reference for code without one: exec, -c)."""
import os
import sys

from . import _breakpoints as bpmod
from ._sources import getlines
from ._usercode import PKG_DIR

# How long a stack request waits for a thread still running Python code to park (seconds).
PARK_WAIT = 0.05

_RUNPY = os.path.splitext(getattr(sys.modules.get("runpy"), "__file__", "") or "runpy")[0] + ".py"


class Frames:
    """Handed the monitor (its parked threads, its justMyCode test)."""

    def __init__(self, monitor):
        self.monitor = monitor
        self.sources = {}  # source reference -> filename, for the whole session
        self._frames = {}  # frame id -> (frame, thread ident), until the program runs
        self._frame_ids = {}
        self._next_frame = 1

    def invalidate(self):
        self._frames.clear()
        self._frame_ids.clear()

    # ---- frames -----------------------------------------------------------------------------
    def _top_frame(self, ident):
        m = self.monitor
        f = m.parking.parked_frame(ident)
        if f is None:
            m.parking.wait_parked(ident, PARK_WAIT)
            f = m.parking.parked_frame(ident)
        if f is None:
            f = sys._current_frames().get(ident)
        while f is not None and f.f_code.co_filename.startswith(PKG_DIR):
            f = f.f_back
        return f

    def frame_list(self, ident):
        out = []
        f = self._top_frame(ident)
        while f is not None:
            # Below the program's first frame sit only the launcher's (strata, runpy).
            fn = f.f_code.co_filename
            if fn.startswith(PKG_DIR) or fn in ("<frozen runpy>", _RUNPY):
                break
            out.append(f)
            f = f.f_back
        return out

    def frame_id(self, frame, ident):
        key = id(frame)
        fid = self._frame_ids.get(key)
        if fid is None:
            fid = self._next_frame
            self._next_frame += 1
            self._frame_ids[key] = fid
            self._frames[fid] = (frame, ident)
        return fid

    def get(self, fid):
        """The frame of id `fid`, or None."""
        got = self._frames.get(fid)
        return None if got is None else got[0]

    def any_frame(self):
        """One frame that has an id (the first given out), or None."""
        for f, _ in self._frames.values():
            return f
        return None

    def stack_trace(self, ident, start, levels):
        frames = self.frame_list(ident)
        sel = frames[start:start + levels] if levels else frames[start:]
        out = []
        is_user = self.monitor.is_user
        for f in sel:
            item = {"id": self.frame_id(f, ident), "name": bpmod.qualname(f.f_code, f),
                    "line": f.f_lineno or f.f_code.co_firstlineno, "column": 1,
                    "source": self.source(f.f_code.co_filename)}
            if not is_user(f):
                item["presentationHint"] = "subtle"
            out.append(item)
        return {"stackFrames": out, "totalFrames": len(frames)}

    # ---- sources ----------------------------------------------------------------------------
    def source(self, filename):
        if not filename.startswith("<") and os.path.exists(filename):
            return {"name": os.path.basename(filename), "path": filename}
        ref = None
        for r, fn in self.sources.items():
            if fn == filename:
                ref = r
        if ref is None and getlines(filename):
            ref = len(self.sources) + 1
            self.sources[ref] = filename
        src = {"name": filename}
        if ref:
            src["sourceReference"] = ref
        else:
            src["presentationHint"] = "deemphasize"
        return src
