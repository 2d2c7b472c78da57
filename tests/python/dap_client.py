"""A small DAP client for driving the Strata Python agent in tests and benchmarks."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TARGETS = os.path.join(REPO, "tests", "targets", "python")


def agent_pythonpath():
    """The built package tree (<build>/python) when given, else the sources with the pure core."""
    if os.environ.get("STRATA_AGENT_PATH"):
        return os.path.abspath(os.environ["STRATA_AGENT_PATH"])
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and os.path.isdir(os.path.join(p, "strata")):
            return os.path.abspath(p)
    return os.path.join(REPO, "backends", "python", "agent")


def target(name):
    return os.path.join(TARGETS, name)


def markers(path):
    """{'name': line} from '# @bp:name' comments."""
    out = {}
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if "# @bp:" in line:
                out[line.split("# @bp:", 1)[1].split()[0]] = i
    return out


class DapClient:
    def __init__(self, sock):
        self.sock = sock
        self.seq = 0
        self.buf = b""
        self.lock = threading.Condition()
        self.responses = {}
        self.events = []
        self.closed = False
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    @classmethod
    def connect(cls, port, host="127.0.0.1", timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                s = socket.create_connection((host, port), timeout=timeout)
                s.settimeout(None)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return cls(s)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _read_loop(self):
        try:
            while True:
                while b"\r\n\r\n" not in self.buf:
                    chunk = self.sock.recv(1 << 16)
                    if not chunk:
                        raise EOFError
                    self.buf += chunk
                head, _, rest = self.buf.partition(b"\r\n\r\n")
                n = int(head.split(b":")[1])
                while len(rest) < n:
                    chunk = self.sock.recv(1 << 16)
                    if not chunk:
                        raise EOFError
                    rest += chunk
                msg = json.loads(rest[:n])
                self.buf = rest[n:]
                with self.lock:
                    if msg["type"] == "response":
                        self.responses[msg["request_seq"]] = msg
                    else:
                        self.events.append(msg)
                    self.lock.notify_all()
        except (EOFError, OSError, ValueError):
            with self.lock:
                self.closed = True
                self.lock.notify_all()

    def send(self, command, **arguments):
        with self.lock:
            self.seq += 1
            seq = self.seq
        msg = {"seq": seq, "type": "request", "command": command, "arguments": arguments}
        body = json.dumps(msg).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return seq

    def response(self, seq, timeout=10.0):
        deadline = time.monotonic() + timeout
        with self.lock:
            while seq not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise TimeoutError(f"no response to request {seq}")
                self.lock.wait(left)
            return self.responses.pop(seq)

    def request(self, command, timeout=10.0, **arguments):
        r = self.response(self.send(command, **arguments), timeout)
        if not r["success"]:
            raise AssertionError(f"{command} failed: {r.get('message')}")
        return r.get("body") or {}

    def request_raw(self, command, timeout=10.0, **arguments):
        return self.response(self.send(command, **arguments), timeout)

    def wait_event(self, name, timeout=10.0, pred=None):
        """Returns and consumes the first matching event."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for i, ev in enumerate(self.events):
                    if ev.get("event") == name and (pred is None or pred(ev.get("body") or {})):
                        del self.events[i]
                        return ev.get("body") or {}
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    kinds = sorted({e.get("event") for e in self.events})
                    raise TimeoutError(f"no '{name}' event ({len(self.events)} others: {kinds})")
                self.lock.wait(left)

    def take_events(self, name):
        with self.lock:
            got = [e.get("body") or {} for e in self.events if e.get("event") == name]
            self.events = [e for e in self.events if e.get("event") != name]
            return got

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class AgentProcess:
    """python -m strata --listen 127.0.0.1:0 --port-file F [--wait-for-client] <target>."""

    def __init__(self, args, wait=True, python=None, env=None, cwd=None):
        # Removed with this object (or at exit): a suite starts hundreds of agents.
        self._tmp = tempfile.TemporaryDirectory(prefix="strata-test-")
        self.tmp = self._tmp.name
        self.port_file = os.path.join(self.tmp, "port")
        cmd = [python or sys.executable, "-m", "strata", "--listen", "127.0.0.1:0",
               "--port-file", self.port_file]
        if wait:
            cmd.append("--wait-for-client")
        e = dict(os.environ)
        e["PYTHONPATH"] = agent_pythonpath()
        e.update(env or {})
        self.proc = subprocess.Popen(cmd + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=e, cwd=cwd or REPO)
        self.port = self._read_port()

    def _read_port(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(self.port_file) as f:
                    return int(f.read().strip())
            except (FileNotFoundError, ValueError):
                if self.proc.poll() is not None:
                    raise RuntimeError("agent exited: " + self.proc.stderr.read().decode())
                time.sleep(0.01)
        raise TimeoutError("agent did not report its port")

    def client(self, **configure):
        c = DapClient.connect(self.port)
        c.request("initialize", adapterID="strata", clientID="tests", linesStartAt1=True,
                  columnsStartAt1=True)
        c.wait_event("initialized")
        if configure:
            c.request("configure", **configure)
        return c

    def finish(self, timeout=20.0):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError("debuggee did not exit: " + err.decode()[-2000:])
        return self.proc.returncode, out.decode(), err.decode()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
