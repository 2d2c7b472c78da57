"""One method per DAP request the agent serves; errors become success:false responses.

Requests is handed the agent (its link, options, output redirection and session) and keeps what
only requests use: the variables (Inspector) and the frames of a stop (_stack.Frames)."""
import functools
import os
import sys
import threading

from . import _breakpoints as bpmod
from . import _evaluate
from . import _exceptions as excmod
from . import _ranks
from ._inspect import Inspector, ReprGuard, ReprTimeout
from ._sources import getlines
from ._stack import Frames

# How long an evaluation may run before it is interrupted (seconds).
EVAL_LIMITS = {"repl": 30.0, "clipboard": 10.0}
EVAL_LIMIT_DEFAULT = 3.0

class RequestError(Exception):
    pass


CAPABILITIES = {
    "supportsConfigurationDoneRequest": True,
    "supportsFunctionBreakpoints": True,
    "supportsConditionalBreakpoints": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsEvaluateForHovers": True,
    "exceptionBreakpointFilters": excmod.FILTERS,
    "supportsSetVariable": True,
    "supportsCompletionsRequest": True,
    "completionTriggerCharacters": ["."],
    "supportsExceptionInfoRequest": True,
    "supportsExceptionFilterOptions": True,
    "supportsLogPoints": True,
    "supportsSetExpression": True,
    "supportsClipboardContext": True,
    "supportsDelayedStackTraceLoading": True,
    "supportsSingleThreadExecutionRequests": True,
    "supportTerminateDebuggee": True,
}


class Requests:
    def __init__(self, agent):
        self.agent = agent
        self.monitor = agent.monitor
        self.inspector = Inspector(ReprGuard(self.monitor, self.monitor.internal))
        self.frames = Frames(self.monitor)
        self.columns_start_at_1 = True

    def invalidate(self):
        """The program runs again (or the session ends): variables and frame ids go."""
        self.inspector.clear()
        self.frames.invalidate()

    def dispatch(self, req):
        command = req.get("command", "")
        args = req.get("arguments") or {}
        handler = getattr(self, "on_" + command, None)
        resp = {"type": "response", "request_seq": req.get("seq", 0), "command": command,
                "success": True}
        after = None
        try:
            if handler is None:
                raise RequestError(f"unsupported request '{command}'")
            body = handler(args)
            if isinstance(body, tuple):
                body, after = body
            if body is not None:
                resp["body"] = body
        except (Exception, ReprTimeout) as e:
            msg = str(e) if isinstance(e, (RequestError, KeyError)) else f"{type(e).__name__}: {e}"
            resp["success"] = False
            resp["message"] = msg.strip("'\"") if isinstance(e, KeyError) else msg
            resp["body"] = {"error": {"id": 1, "format": resp["message"], "showUser": False}}
        self.agent.send(resp)
        if after:
            after()

    # ---- session -------------------------------------------------------------------------
    def on_initialize(self, args):
        self.columns_start_at_1 = args.get("columnsStartAt1", True)
        return dict(CAPABILITIES), lambda: self.agent.send_event("initialized")

    def _take_options(self, args):
        options = self.agent.options
        for k in ("justMyCode", "stopOnEntry"):
            if k in args:
                options[k] = bool(args[k])
        self.monitor.user.set_just_my_code(options["justMyCode"])
        if args.get("redirectOutput"):
            self.agent.redirect_output(True)
        children = args.get("strataChildren")
        if isinstance(children, dict) and children.get("address") and children.get("token"):
            from . import _children
            _children.enable(children["address"], children["token"])
        crash = args.get("strataCrash")
        if isinstance(crash, dict) and crash.get("address") and crash.get("token"):
            from . import _crash
            why = _crash.arm(crash["address"], crash["token"], crash.get("tracer") or 0)
            if why:
                self.agent.send_event("output", {"category": "console",
                                                 "output": f"Crashes will not stop this program: {why}\n"})

    def on_configure(self, args):
        self._take_options(args)

    on_attach = on_configure
    on_launch = on_configure

    def on_configurationDone(self, args):
        return None, self.agent.configured.set

    # ---- the processes of a distributed job (strata-dap's ranks session) --------------------
    def on_strataProcess(self, args):
        return _ranks.describe()

    def on_strataHandover(self, args):
        """This process gets a debug session of its own (a child session): listen on loopback for
        it with the given token; the program waits until that session is configured."""
        token = args.get("token")
        if not token:
            raise RequestError("arguments.token is required")
        return {"port": self.agent.hand_over(token)}

    def on_disconnect(self, args):
        self.agent.close_after_reply()
        if args.get("terminateDebuggee"):
            return None, lambda: os._exit(0)
        return None

    # ---- GPU collection started late (the adapter sends these; clients use gpuStart/gpuStop)
    def on_strataGpuStart(self, args):
        return self._gpu_collection(args, "start", lambda gpu, collector: gpu.start(
            collector, args.get("config") or "", functools.partial(gpu.stop_on_error, self.monitor)))

    def on_strataGpuStop(self, args):
        return self._gpu_collection(args, "stop", lambda gpu, collector: gpu.stop(collector))

    def _gpu_collection(self, args, verb, call):
        """call(_gpu, the collector's path) -> (result, status) on the collector the request
        names; its status, or a RequestError when it is not named, does not load or did not `verb`."""
        collector = args.get("collector")
        if not collector:
            raise RequestError("arguments.collector (the path of libstrata_cupti.so) is required")
        from . import _gpu
        try:
            result, status = call(_gpu, collector)
        except OSError as e:
            raise RequestError(f"cannot load the GPU collector {collector}: {e}")
        if result != 0:
            raise RequestError(f"GPU collection did not {verb}: {status}")
        return {"status": status}

    # ---- breakpoints ---------------------------------------------------------------------
    def on_setBreakpoints(self, args):
        src = args.get("source") or {}
        path = src.get("path")
        if not path:
            ref = src.get("sourceReference")
            path = self.frames.sources.get(ref)
            if not path:
                raise RequestError("arguments.source.path is required")
        specs = args.get("breakpoints")
        if specs is None:
            specs = [{"line": ln} for ln in args.get("lines", [])]
        text = None
        if path.startswith("<"):
            text = "".join(getlines(path)) or None
        bps = self.monitor.tables.set_breakpoints(path, specs, text)
        return {"breakpoints": [b.to_dap() for b in bps]}

    def on_setFunctionBreakpoints(self, args):
        bps = self.monitor.tables.set_function_breakpoints(args.get("breakpoints", []))
        return {"breakpoints": [b.to_dap() for b in bps]}

    def on_setExceptionBreakpoints(self, args):
        errors = self.monitor.tables.set_exception_filters(args.get("filters", []), args.get("filterOptions"))
        names = list(args.get("filters", [])) + [o.get("filterId") for o in args.get("filterOptions") or ()]
        out = []
        for n in names:
            if n in errors:
                out.append({"verified": False, "message": errors[n]})
            elif n in excmod.NAMES:
                out.append({"verified": True})
            else:
                out.append({"verified": False, "message": f"unknown exception filter {n!r}"})
        return {"breakpoints": out}

    # ---- execution -----------------------------------------------------------------------
    def _ident(self, args, required=True):
        tid = args.get("threadId")
        for t in threading.enumerate():
            if t.native_id == tid:
                return t.ident
        for ts in list(self.monitor.threads.values()):
            if ts.tid == tid:
                return ts.ident
        if required:
            raise RequestError(f"unknown threadId {tid}")
        return None

    def _resume(self, args, step=None):
        """(single, go): the threads are let go by `go`, after the answer is sent: a thread let
        go may end the process at once (os._exit after the breakpoint), answer unsent."""
        ident = self._ident(args, required=step is not None)
        single = bool(args.get("singleThread"))
        self.invalidate()
        return single, lambda: self.monitor.parking.resume(ident, single, step)

    def on_continue(self, args):
        single, go = self._resume(args)
        return {"allThreadsContinued": not single}, go

    def on_next(self, args):
        return None, self._resume(args, "over")[1]

    def on_stepIn(self, args):
        return None, self._resume(args, "in")[1]

    def on_stepOut(self, args):
        return None, self._resume(args, "out")[1]

    def on_pause(self, args):
        self.monitor.parking.request_pause()

    # ---- inspection ----------------------------------------------------------------------
    def on_threads(self, args):
        self.agent.thread_events()
        return {"threads": [{"id": tid, "name": name} for tid, name in self.agent.python_threads().items()]}

    def _frame(self, args, key="frameId", required=True):
        fid = args.get(key)
        if fid is None and not required:
            return None
        frame = self.frames.get(fid)
        if frame is None:
            raise RequestError(f"unknown frameId {fid} (frames are valid while stopped)")
        return frame

    def on_stackTrace(self, args):
        return self.frames.stack_trace(self._ident(args), args.get("startFrame") or 0,
                                       args.get("levels") or 0)

    def on_source(self, args):
        ref = args.get("sourceReference") or (args.get("source") or {}).get("sourceReference")
        fn = self.frames.sources.get(ref)
        lines = getlines(fn) if fn else []
        if not lines:
            raise RequestError(f"no source available for sourceReference {ref}")
        return {"content": "".join(lines), "mimeType": "text/x-python"}

    def on_scopes(self, args):
        frame = self._frame(args)
        ins = self.inspector
        loc = ins.new_ref(("scope", "locals", frame))
        glo = ins.new_ref(("scope", "globals", frame))
        is_module = frame.f_locals is frame.f_globals if frame.f_code.co_name == "<module>" else False
        scopes = [{"name": "Locals", "presentationHint": "locals", "variablesReference": loc,
                   "expensive": False}]
        if not is_module:
            scopes.append({"name": "Globals", "variablesReference": glo, "expensive": False})
        return {"scopes": scopes}

    def on_variables(self, args):
        ref = args.get("variablesReference")
        return {"variables": self.inspector.children(ref, args.get("filter"), args.get("start", 0),
                                                     args.get("count", 0))}

    def on_evaluate(self, args):
        frame = self._frame(args, required=False)
        expr = args.get("expression", "")
        ctx = args.get("context", "repl")
        ins = self.inspector
        ins.guard.begin()
        try:
            value, stmt = ins.guard.run(lambda: _evaluate.evaluate(self.monitor.core, frame, expr, ctx),
                                        EVAL_LIMITS.get(ctx, EVAL_LIMIT_DEFAULT))
        except ReprTimeout:
            raise RequestError(f"evaluation stopped after {EVAL_LIMITS.get(ctx, EVAL_LIMIT_DEFAULT):g} s") from None
        except Exception as e:
            if isinstance(e, SyntaxError):
                text = f"SyntaxError: {e.msg}"
                if e.text:
                    text += f"\n    {e.text.rstrip()}"
            else:
                text = f"{type(e).__name__}: {e}"
            raise RequestError(text) from None
        finally:
            ins.guard.end()
        if stmt:
            return {"result": "", "variablesReference": 0}
        if ctx == "clipboard" and isinstance(value, (str, bytes)):
            return {"result": repr(value), "variablesReference": 0}
        var = ins.variable(expr, value, expr)
        body = {"result": var["value"], "type": var.get("type"),
                "variablesReference": var["variablesReference"]}
        for k in ("indexedVariables", "namedVariables", "presentationHint"):
            if k in var:
                body[k] = var[k]
        return body

    def on_setVariable(self, args):
        ref = args.get("variablesReference")
        prov = self.inspector.refs.get(ref)
        if prov is None:
            raise RequestError(f"unknown variablesReference {ref}")
        frame = prov[2] if prov[0] == "scope" else None
        if frame is None:
            frame = self.frames.any_frame()
        value, _ = _evaluate.evaluate(self.monitor.core, frame, args.get("value", ""), "watch")
        _evaluate.set_child(self.monitor.core, prov, args.get("name", ""), value)
        var = self.inspector.variable(args.get("name", ""), value)
        body = {"value": var["value"], "type": var["type"], "variablesReference": var["variablesReference"]}
        for k in ("indexedVariables", "namedVariables"):
            if k in var:
                body[k] = var[k]
        return body

    def on_setExpression(self, args):
        frame = self._frame(args, required=False)
        value, _ = _evaluate.evaluate(self.monitor.core, frame, args.get("value", ""), "watch")
        _evaluate.assign(self.monitor.core, frame, args.get("expression", ""), value)
        var = self.inspector.variable(args.get("expression", ""), value)
        return {"value": var["value"], "type": var["type"], "variablesReference": var["variablesReference"]}

    def on_completions(self, args):
        frame = self._frame(args, required=False)
        return {"targets": _evaluate.completions(frame, args.get("text", ""), args.get("column", 1),
                                                 self.columns_start_at_1)}

    def on_exceptionInfo(self, args):
        ident = self._ident(args)
        ts = self.monitor.threads.get(ident)
        if ts is None or ts.exc is None:
            raise RequestError("this thread is not stopped on an exception")
        gpu = sys.modules.get(__package__ + "._gpu")
        if gpu is not None and isinstance(ts.exc, gpu.CudaError):
            return gpu.exception_info(ts.exc.info, ts.exc_text)
        name, msg = excmod.describe(ts.exc)
        t = type(ts.exc)
        return {"exceptionId": name, "description": msg, "breakMode": ts.exc_mode,
                "details": {"message": msg, "typeName": t.__qualname__,
                            "fullTypeName": f"{t.__module__}.{t.__qualname__}",
                            "stackTrace": ts.exc_text}}
