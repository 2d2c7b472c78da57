"""The in-target agent: owns the link, its internal threads, output delivery and the lifecycle.

It hands itself to the objects it is made of: the monitor (_monitor.Monitor: breakpoints,
stops, steps) and the request handlers (_requests.Requests); neither imports this module."""
import atexit
import functools
import os
import sys
import threading
import time

from . import _children
from . import _crash
from . import _link
from . import _ranks
from ._breakpoints import Breakpoint
from ._monitor import Monitor
from ._requests import Requests

_agent = None


class _Tee:
    _strata_tee = True

    def __init__(self, inner, category, queue):
        self._inner, self._category, self._queue = inner, category, queue

    def write(self, text):
        n = self._inner.write(text)
        if text:
            self._queue.append((None, (self._category, str(text))))
        return n

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def get():
    global _agent
    if _agent is None:
        _agent = Agent()
    return _agent


class Agent:
    def __init__(self):
        self.monitor = Monitor(self)
        self.internal = self.monitor.internal
        self.requests = Requests(self)
        self.conn = None
        self.listener = None
        self.listen_address = None
        self.dial_address = None
        self.token = None
        self.configured = threading.Event()
        self.connected = threading.Event()
        self.options = {"justMyCode": True, "stopOnEntry": False}
        self.exit_code = None
        self.main_ident = threading.main_thread().ident
        self._flush_lock = threading.Lock()
        self._log_bp = None
        self._server = None
        self._pump = None
        self._known_threads = {}
        self._threads_lock = threading.Lock()
        self._exited = False
        self._closing = False
        self._handover = False
        atexit.register(self._at_exit)
        os.register_at_fork(after_in_child=self._after_fork_child)

    # ---- starting ------------------------------------------------------------------------
    def listen(self, host, port, port_file=None, token=None):
        if self.listener is not None:
            return self.listen_address
        token = token or os.environ.get("STRATA_TOKEN") or None
        _link.require_token(host, token, "listening on")
        self.token = token
        self.listener = _link.make_listener(host, port)
        self.listen_address = self.listener.getsockname()[:2]
        if port_file:
            tmp = f"{port_file}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(f"{self.listen_address[1]}\n")
            os.replace(tmp, port_file)
        self._start_server()
        return self.listen_address

    def connect(self, host, port, token=None, token_line=None):
        # A program the adapter launched is known by its environment (checked through /proc):
        # it sends no token line, whatever STRATA_TOKEN says. The processes of a job launched
        # with "ranks" and the children of a debugged program send the token they were given
        # (`token_line`; a rank on another machine has no /proc here).
        if token_line:
            token = token_line
        elif os.environ.get("STRATA_LAUNCH_TOKEN"):
            token = None
        else:
            token = token or os.environ.get("STRATA_TOKEN") or None
            _link.require_token(host, token, "connecting to")
        self.dial_address = (host, port)
        self.conn = _link.dial(host, port, token=token)
        self._start_server()

    def _start_server(self):
        # A later attach to the same process finds the threads of the last session ended.
        if self._server is None or not self._server.is_alive():
            self._server = threading.Thread(target=self._serve, name="strata.server", daemon=True)
            self._server.start()
            self.internal.add(self._server.ident)
        if self._pump is None or not self._pump.is_alive():
            self._pump = threading.Thread(target=self._pump_loop, name="strata.output", daemon=True)
            self._pump.start()
            self.internal.add(self._pump.ident)

    def wait_for_client(self, timeout=None):
        return self.configured.wait(timeout)

    # ---- serving -------------------------------------------------------------------------
    def _serve(self):
        _link.name_os_thread("strata.server")
        while True:
            if self.conn is None:
                if self.listener is None:
                    return
                try:
                    conn = _link.accept(self.listener)
                except OSError:
                    return
                if self.token and not conn.check_token(self.token):
                    conn.close()  # refused before a single request is read
                    continue
                self.conn = conn
            self._session(self.conn)
            self.conn = None
            if self.listener is None:
                return

    def _session(self, conn):
        self.connected.set()
        self._known_threads = self.python_threads()
        try:
            self.monitor.install()
        except RuntimeError as e:
            conn.send({"type": "event", "event": "output",
                       "body": {"category": "important", "output": f"{e}\n"}})
            conn.close()
            self.connected.clear()
            return
        self._watch_cuda_errors()
        try:
            while True:
                msg = conn.read()
                if msg.get("type") == "request":
                    self.requests.dispatch(msg)
                    if self._closing:
                        break
        except (_link.LinkClosed, ValueError):
            pass
        except BaseException as e:  # noqa: B036 - a bug here must never take the program down
            sys.stderr.write(f"strata: session ended by an internal error: {type(e).__name__}: {e}\n")
        finally:
            self._end_session(conn)

    def _end_session(self, conn):
        """Debugging ends: the program runs on as if it had never been debugged."""
        self.redirect_output(False)
        _children.disable()
        _crash.disarm()
        self.flush_logs()
        self.monitor.uninstall()
        self.requests.invalidate()
        conn.close()
        self._closing = False
        self.connected.clear()
        if self._handover:
            # The program waits for the session it was handed over to (strataHandover).
            self._handover = False
            return
        self.configured.set()

    def hand_over(self, token):
        """This process gets a debug session of its own (strataHandover): a listener on loopback
        for it, with `token`; the session ends after the reply. Returns the port."""
        if self.listener is None:
            self.token = token
            self.listener = _link.make_listener("127.0.0.1", 0)
            self.listen_address = self.listener.getsockname()[:2]
        self._handover = True
        self._closing = True
        return self.listen_address[1]

    def close_after_reply(self):
        """The session ends once the request being served has its reply (disconnect)."""
        self._closing = True

    def send(self, msg):
        conn = self.conn
        if conn is not None:
            conn.send(msg)

    def send_event(self, event, body=None):
        msg = {"type": "event", "event": event}
        if body is not None:
            msg["body"] = body
        self.send(msg)

    # ---- output and thread events --------------------------------------------------------
    def flush_logs(self, wait=True):
        """Sends queued output. With wait, also waits for a flush already in progress on
        another thread, so whatever is sent next (stopped, exited) comes after every line.

        The queue holds, in order: a Breakpoint (the lines after it are its log lines),
        plain strings (log lines written in C), and (bp, text) tuples from Python code,
        where text is a log line or (category, text)."""
        q = self.monitor.log_queue
        if not q and not wait:
            return
        with self._flush_lock:
            n = len(q)
            if n == 0:
                return
            items = q[:n]
            del q[:n]
            conn = self.conn
            if conn is None:
                self._log_bp = next((x for x in reversed(items) if isinstance(x, Breakpoint)), self._log_bp)
                return
            head = '{"type":"event","event":"output","seq":'
            if set(map(type, items)) == {str}:
                # One busy log point: no per-line work in Python.
                conn.send_raw_bodies([(head, self._output_tail("console", "\n".join(items) + "\n",
                                                               self._log_bp))])
                return
            out, run = [], []
            for x in items:
                if type(x) is str:
                    run.append(x)
                    continue
                if run:
                    out.append((head, self._output_tail("console", "\n".join(run) + "\n", self._log_bp)))
                    run = []
                if isinstance(x, Breakpoint):
                    self._log_bp = x
                    continue
                bp, text = x
                if isinstance(text, tuple):
                    category, text = text
                else:
                    category, text = "console", str(text) + "\n"
                out.append((head, self._output_tail(category, text, bp)))
            if run:
                out.append((head, self._output_tail("console", "\n".join(run) + "\n", self._log_bp)))
            conn.send_raw_bodies(out)

    @staticmethod
    def _output_tail(category, text, bp):
        tail = ',"body":{"category":"' + category + '","output":' + _link.dumps(text)
        if bp is not None and bp.path:
            loc = getattr(bp, "_json_loc", None)
            if loc is None:
                loc = ',"source":' + _link.dumps({"path": bp.path}) + ',"line":' + str(bp.line)
                bp._json_loc = loc
            tail += loc
        return tail + "}}"

    def python_threads(self):
        out = {}
        for t in threading.enumerate():
            if t.ident in self.internal or t.native_id is None:
                continue
            out[t.native_id] = t.name
        return out

    def _pump_loop(self):
        _link.name_os_thread("strata.output")
        # Wakes often only while log points produce lines, so an idle agent costs nothing.
        last_threads = 0.0
        busy = False
        q = self.monitor.log_queue
        while True:
            time.sleep(0.005 if busy else 0.05)
            try:
                busy = bool(q)
                self.flush_logs(wait=False)
                now = time.monotonic()
                if now - last_threads >= 0.1 and self.connected.is_set() and self.conn is not None:
                    last_threads = now
                    self.thread_events()
            except Exception:
                pass

    def thread_events(self):
        # The output thread, a threads request and the exit all call this: one at a time, so no
        # change is told twice or lost between two of them.
        with self._threads_lock:
            if len(self.monitor.threads) > 64:
                self.monitor.forget_dead_threads({t.ident for t in threading.enumerate()})
            now = self.python_threads()
            old = self._known_threads
            self._known_threads = now
            for tid, name in now.items():
                if tid not in old:
                    self.send_event("thread", {"reason": "started", "threadId": tid, "name": name})
            for tid, name in old.items():
                if tid not in now:
                    self.send_event("thread", {"reason": "exited", "threadId": tid, "name": name})

    # ---- lifecycle -----------------------------------------------------------------------
    def _watch_cuda_errors(self):
        """Launch mode with GPU collection: the CUDA driver will load the collector the adapter
        named in CUDA_INJECTION64_PATH at the program's first CUDA call. Loading it now (the
        driver then finds it loaded) registers the error hook before any CUDA code runs."""
        env = os.environ.get("CUDA_INJECTION64_PATH")
        if not env or os.path.basename(env) != "libstrata_cupti.so":
            return
        from . import _gpu
        collector = _gpu.injected_collector()
        if collector is None:
            return
        try:
            _gpu.watch_errors(collector, functools.partial(_gpu.stop_on_error, self.monitor))
        except (OSError, AttributeError) as e:
            self.send_event("output", {"category": "important",
                                       "output": f"CUDA errors will not stop the program: cannot load {collector}: {e}\n"})

    def _at_exit(self):
        gpu = sys.modules.get(__package__ + "._gpu")
        if gpu is not None:
            # CUDA calls made while the interpreter is torn down (torch frees its memory then)
            # must not call into Python.
            gpu.unwatch_errors()
        if self._exited or self.conn is None:
            return
        self._exited = True
        self.flush_logs()
        self.thread_events()
        code = self.exit_code if self.exit_code is not None else 0
        self.send_event("exited", {"exitCode": code})
        self.send_event("terminated")
        conn = self.conn
        if conn is not None:
            try:
                conn.sock.shutdown(_link.socket.SHUT_WR)
            except OSError:
                pass

    def _after_fork_child(self):
        """A forked child has no link of its own: it drops instrumentation and runs free."""
        m = self.monitor
        m.cond = threading.Condition(threading.RLock())
        self._flush_lock = threading.Lock()
        self._threads_lock = threading.Lock()
        m.log_queue.clear()
        _crash.disarm()  # the parent's link to the adapter, not the child's
        self._exited = True
        for s in (self.conn.sock if self.conn else None, self.listener):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        self.conn = None
        self.listener = None
        self._server = self._pump = None
        m.internal.clear()
        m.threads.clear()
        m.uninstall()
        self.connected.clear()
        self.configured.set()
        self._exited = False
        if os.environ.get("STRATA_RANKS"):
            # A process of a job launched with "ranks": the child dials the debugger too.
            _ranks.boot(self)
        elif os.environ.get(_children.ADDRESS):
            # A child of a debugged program: a session of its own (subProcess).
            _children.boot(self)

    def redirect_output(self, on):
        """Copies the program's stdout/stderr to the client as output events, queued with
        log lines so both keep their order; the real streams still get every byte."""
        if on and not getattr(sys.stdout, "_strata_tee", False):
            q = self.monitor.log_queue
            sys.stdout = _Tee(sys.stdout, "stdout", q)
            sys.stderr = _Tee(sys.stderr, "stderr", q)
        elif not on:
            for name in ("stdout", "stderr"):
                s = getattr(sys, name)
                if getattr(s, "_strata_tee", False):
                    setattr(sys, name, s._inner)

    def stop_here(self, frame, reason="pause", description=None):
        if not self.connected.is_set() or not self.monitor.installed:
            return
        m = self.monitor
        ts = m.thread(threading.get_ident())
        ts.busy = True
        try:
            m.stop(ts, frame, reason, description=description, explicit=True)
        finally:
            ts.busy = False
