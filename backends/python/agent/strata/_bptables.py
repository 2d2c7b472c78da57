"""The breakpoint tables: what the client set (line, function and exception breakpoints) turned
into the tables the core and the monitor's callbacks read, and the code armed from them.

BreakpointTables is handed the monitor, which holds the tables its callbacks and the core read
(codes, files, funcnames, line_bps, pending_bps, func_bps, exc_filters, cuda_errors) under its
lock (cond); this object keeps only the client's line breakpoints per file (path_bps)."""
import os
import sys

from . import _breakpoints as bpmod
from . import _exceptions as excmod
from ._sources import getlines


class BreakpointTables:
    def __init__(self, monitor):
        self.m = monitor
        self.path_bps = {}

    def clear(self):
        m = self.m
        m.codes.clear()
        m.files.clear()
        m.funcnames.clear()
        self.path_bps.clear()
        m.line_bps.clear()
        m.pending_bps.clear()
        m.func_bps = []
        m.exc_filters = {}

    # ---- what the client sets ---------------------------------------------------------------
    def set_breakpoints(self, path, specs, source_text=None):
        m = self.m
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
        with m.cond:
            if new:
                self.path_bps[canon] = new
            else:
                self.path_bps.pop(canon, None)
            table = {}
            for bp in new:
                if bp.verified:
                    table.setdefault(bp.line, []).append(bp)
            if table:
                m.line_bps[canon] = table
            else:
                m.line_bps.pop(canon, None)
            # A file that does not exist yet (generated, exec'd) is looked at again when
            # its code first runs; the client then gets a 'breakpoint' changed event.
            pending = [b for b in new if not b.verified and not b.error
                       and (b.message or "").startswith("file not found")]
            if pending:
                m.pending_bps[canon] = pending
            else:
                m.pending_bps.pop(canon, None)
            old_keys = {k for k, v in m.files.items() if v == canon}
            self._refresh_files()
            events = m.events
            for code in [c for c in m.codes if c.co_filename in old_keys
                         or bpmod.canon(c.co_filename) == canon]:
                del m.codes[code]
                events.disarm_code(code)
            self._arm_running(canon)
            if m.patcher is not None:
                m.patcher.apply(canon)
            events.update()
            events.restart()
        return new

    def set_function_breakpoints(self, specs):
        m = self.m
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
        with m.cond:
            m.func_bps = [b for b in new if b.verified]
            m.funcnames.clear()
            m.funcnames.update(b.func_name.rsplit(".", 1)[-1] for b in m.func_bps)
            m.events.update()
            m.events.restart()
        return new

    def set_exception_filters(self, filters, options):
        m = self.m
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
        with m.cond:
            m.exc_filters = chosen
            m.cuda_errors = cuda
            m.events.update()
        return errors

    # ---- which files and code the tables cover ------------------------------------------------
    def _refresh_files(self):
        m = self.m
        files, line_bps = m.files, m.line_bps
        files.clear()
        for canon in m.pending_bps:
            files[canon] = canon
        for canon in line_bps:
            files[canon] = canon
            real = os.path.realpath(canon)
            files[real] = canon
        if not line_bps:
            return
        # realpath's lstat calls each release the GIL, and a busy thread then keeps it for a
        # switch interval (5 ms): only files named like a breakpoint's file are resolved.
        by_name = {}
        for canon in line_bps:
            by_name.setdefault(os.path.basename(canon), []).append(canon)
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if isinstance(f, str) and f not in files:
                c = bpmod.canon(f)
                if c in line_bps:
                    files[f] = c
                elif os.path.basename(f) in by_name:
                    r = os.path.realpath(f)
                    for canon in by_name[os.path.basename(f)]:
                        if os.path.realpath(canon) == r:
                            files[f] = canon

    def _arm_running(self, canon):
        files = self.m.files
        for top in sys._current_frames().values():
            f = top
            while f is not None:
                fn = f.f_code.co_filename
                if fn not in files and bpmod.canon(fn) == canon:
                    files[fn] = canon
                if files.get(fn) == canon:
                    # A running frame keeps the code it runs: only events reach it.
                    self.arm_code(f.f_code, f.f_globals, traced=True)
                f = f.f_back

    def resolve_pending(self, canon):
        """Code of a file that was not found when its breakpoints were set starts: they are
        resolved against it now, and the client is told."""
        m = self.m
        with m.cond:
            pending = m.pending_bps.get(canon) or []
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
                    m.line_bps.setdefault(canon, {}).setdefault(line, []).append(bp)
                m.agent.send_event("breakpoint", {"reason": "changed", "breakpoint": bp.to_dap()})
            if still:
                m.pending_bps[canon] = still
            else:
                m.pending_bps.pop(canon, None)

    # ---- arming code ----------------------------------------------------------------------------
    def arm_code(self, code, globals_, traced=None):
        """`code` gets its table of breakpoint lines (in m.codes), and line events unless the
        patcher wrote the calls into it."""
        m = self.m
        canon = m.files.get(code.co_filename)
        table_bps = m.line_bps.get(canon) if canon else None
        if not table_bps:
            return
        lines = bpmod.code_lines(code)
        table = {}
        for line, bps in table_bps.items():
            if line in lines:
                table[line] = bps[0].make_entry(code, globals_) if len(bps) == 1 else (
                    bpmod.KIND_SLOW, None, (), bps[0])
        if table:
            m.codes[code] = table
            if traced is None:
                traced = m.patcher is None or not m.patcher.owns(code)
            if traced:
                m.events.arm_code(code)

    def arm_traced(self, code, globals_):
        """Armed through events (the traced way): for code the patcher could not write into."""
        self.arm_code(code, globals_, traced=True)

    def arm_patched(self, code, globals_):
        # On the program's thread, at the code's first call: the tables are the agent thread's too.
        with self.m.cond:
            self.arm_code(code, globals_, traced=False)

    def rekeyed(self, code, change):
        """Runs change(), which alters `code`'s hash (its constants), with `code` out of every
        table it is a key of, and puts it back."""
        m = self.m
        table = m.codes.pop(code, None)
        traced = table is not None and not (m.patcher and m.patcher.owns(code))
        if traced:
            m.events.disarm_code(code)
        change()
        if table is not None:
            m.codes[code] = table
            if traced:
                m.events.arm_code(code)

    def prepare_main(self, code):
        """The main script's code before the agent runs it: with breakpoints written in (3.11)."""
        m = self.m
        if m.patcher is None or not m.installed:
            return code
        with m.cond:
            canon = m.files.get(code.co_filename)
            if canon is None:
                return code
            new = m.patcher.patch_main(code, canon)
            m.events.update()
            return new
