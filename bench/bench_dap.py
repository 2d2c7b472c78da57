"""The DAP client the side-by-side benches share: stdio or a socket, every message stamped on arrival."""

import json
import os
import queue
import socket
import statistics
import subprocess
import threading
import time


class Timeout(Exception):
    pass


def now_ms():
    return time.monotonic_ns() / 1e6


def wall_ns():
    """CLOCK_REALTIME, the clock the debuggees stamp with: one clock for every process."""
    return time.time_ns()


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def shut_down(proc, ask):
    """Asks a debugger to quit (ask()), waits 3 s, then kills it."""
    try:
        ask()
        proc.wait(timeout=3)
    except Exception:
        pass
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def ensure_apt(package, present):
    """present(), after installing Debian's `package` with apt-get if it was falsy."""
    found = present()
    if found:
        return found
    print("installing Debian's %s (apt-get install -y %s)" % (package, package), flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(sudo + ["apt-get", "install", "-y", package], env=env).returncode != 0:
        subprocess.run(sudo + ["apt-get", "update"], env=env)
        subprocess.run(sudo + ["apt-get", "install", "-y", package], env=env)
    return present()


def summary(values, fmt, best=min):
    """'best / median' of the values that are not None, or a dash."""
    values = [v for v in values if v is not None]
    if not values:
        return "—"
    return (fmt % best(values)) + " / " + (fmt % statistics.median(values))


class Dap:
    """One DAP peer: an adapter started over stdio (argv), or a connected socket (sock).

    A reader thread parses every message and stamps it on arrival: `_at` (CLOCK_MONOTONIC, ms)
    for durations inside the bench, `_wall_ns` (CLOCK_REALTIME) to compare with a debuggee's
    own clock. Reverse requests (runInTerminal, startDebugging) are declined."""

    def __init__(self, argv=None, sock=None, log=None, env=None, stderr=subprocess.DEVNULL):
        self.proc = None
        self.sock = sock
        self.t_spawn = now_ms()
        if argv:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                         bufsize=0, env=env)
            self.rfd, self.wfd = self.proc.stdout.fileno(), self.proc.stdin.fileno()
        else:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.rfd = self.wfd = sock.fileno()
        self.seq = 0
        self.responses = {}
        self.events = queue.Queue()
        self.cv = threading.Condition()
        self.write_lock = threading.Lock()
        self.sizes = {}  # request_seq -> bytes of the response body
        self.log = log
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = os.read(self.rfd, 1 << 16)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
                while len(buf) < length:
                    chunk = os.read(self.rfd, 1 << 16)
                    if not chunk:
                        return
                    buf += chunk
                wall, at = wall_ns(), now_ms()
                body, buf = buf[:length], buf[length:]
                self._dispatch(body, length, wall, at)
        except OSError:
            return
        finally:
            self.closed = True
            self.events.put(None)
            with self.cv:
                self.cv.notify_all()

    def _dispatch(self, body, length, wall, at):
        msg = json.loads(body)
        msg["_at"], msg["_wall_ns"] = at, wall
        if self.log:
            self.log.write("<- %s\n" % body[:300].decode(errors="replace"))
        kind = msg.get("type")
        if kind == "response":
            with self.cv:
                self.sizes[msg["request_seq"]] = length
                self.responses[msg["request_seq"]] = msg
                self.cv.notify_all()
        elif kind == "event":
            self.events.put(msg)
        elif kind == "request":
            self._write({"type": "response", "request_seq": msg["seq"], "success": False,
                         "command": msg.get("command"), "message": "not supported"})

    def _write(self, msg):
        with self.write_lock:
            self.seq += 1
            msg["seq"] = self.seq
            data = json.dumps(msg).encode()
            if self.log:
                self.log.write("-> %s\n" % data[:300].decode(errors="replace"))
            out = b"Content-Length: %d\r\n\r\n" % len(data) + data
            while out:
                out = out[os.write(self.wfd, out):]
            return msg["seq"]

    def send(self, command, arguments=None):
        return self._write({"type": "request", "command": command, "arguments": arguments or {}})

    def wait(self, seq, timeout=60):
        deadline = time.monotonic() + timeout
        with self.cv:
            while seq not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise Timeout("no response to request %d" % seq)
                self.cv.wait(min(left, 0.5))
            return self.responses[seq]

    def request(self, command, arguments=None, timeout=60):
        r = self.wait(self.send(command, arguments), timeout)
        if not r.get("success"):
            raise RuntimeError("%s failed: %s" % (command, r.get("message")))
        return r

    def event(self, names, timeout=60, keep=None):
        """The next event named in `names`; others are dropped, or appended to `keep`."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("no %s event" % "/".join(names))
            try:
                e = self.events.get(timeout=left)
            except queue.Empty:
                raise Timeout("no %s event" % "/".join(names))
            if e is None:
                self.events.put(None)
                raise Timeout("the peer closed its output waiting for %s" % "/".join(names))
            if e.get("event") in names:
                return e
            if keep is not None:
                keep.append(e)

    def close(self):
        def ask():
            if not self.closed:
                self.send("disconnect", {"terminateDebuggee": True})
        if self.proc:
            shut_down(self.proc, ask)
        else:
            try:
                ask()
                self.reader.join(3)
            except OSError:
                pass
            self.sock.close()


def strata_log_events(path, event):
    """CLOCK_REALTIME ns at which strata-dap (started with --log path) wrote each `event`
    event to its client, in order: where a stop's latency splits between the debugger and
    the last hop to the client."""
    import calendar
    out = []
    needle = '"event":"%s"' % event
    try:
        f = open(path)
    except OSError:
        return out
    with f:
        for line in f:
            parts = line.split(" ", 3)
            if len(parts) < 4 or parts[2] != "->" or needle not in parts[3]:
                continue
            stamp = parts[0].rstrip("Z")
            day_time, micro = stamp.split(".")
            tt = time.strptime(day_time, "%Y-%m-%dT%H:%M:%S")
            out.append(calendar.timegm(tt) * 10**9 + int(micro) * 1000)
    return out
