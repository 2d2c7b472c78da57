"""One launch through a DAP adapter on stdio, as an editor would send it: a minimal client
(requests, events) and run_session, which stops at a breakpoint and runs to the end."""
import json
import os
import queue
import subprocess
import threading
import time


class DapClient:
    """A DAP client over a child's stdin/stdout: requests, and waiting for what comes back."""

    def __init__(self, argv, cwd, log_path):
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, cwd=cwd)
        self.seq = 0
        self.inbox = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length is None:
                continue
            body = stream.read(length)
            self.inbox.put(json.loads(body))

    def send(self, message):
        self.seq += 1
        message = dict(message, seq=self.seq)
        data = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()
        return self.seq

    def request(self, command, arguments=None):
        message = {"type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        return self.send(message)

    def wait(self, matches, timeout, what):
        for m in self.seen:
            if matches(m):
                self.seen.remove(m)
                return m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {what} within {timeout} s")
            try:
                m = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise EOFError(f"strata-dap closed its output while waiting for {what}")
            if m.get("type") == "request":  # runInTerminal, startDebugging: not offered
                self.send({"type": "response", "request_seq": m["seq"], "command": m["command"],
                           "success": False, "message": "not supported by this client"})
                continue
            if matches(m):
                return m
            self.seen.append(m)

    def response(self, seq, timeout=60):
        return self.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == seq,
                         timeout, f"response to request {seq}")

    def event(self, name, timeout=60):
        return self.wait(lambda m: m.get("type") == "event" and m.get("event") == name, timeout,
                         f"'{name}' event")

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def run_session(argv, config, source, line, output, cwd, log_path, adapter_id, config_request=None):
    """Sends CONFIG as its `request` (or CONFIG_REQUEST, for a client that sends the arguments
    without it), stops at SOURCE:LINE, runs to the end printing OUTPUT. Returns None or what went
    wrong."""
    client = DapClient(argv, cwd, log_path)
    try:
        init = client.response(client.request("initialize", {
            "clientID": "strata-editors-check", "adapterID": adapter_id, "pathFormat": "path",
            "linesStartAt1": True, "columnsStartAt1": True}))
        if not init.get("success"):
            return f"initialize failed: {init.get('message')}"
        request = config.get("request") or config_request
        start = client.request(request, config)
        first = client.wait(lambda m: (m.get("type") == "event" and m.get("event") == "initialized")
                            or (m.get("type") == "response" and m.get("request_seq") == start),
                            90, f"'initialized' or the {request} response")
        if first.get("type") == "response" and not first.get("success"):
            return f"{request} failed: {first.get('message')}"
        if first.get("type") == "response":
            client.event("initialized")
        client.response(client.request("setBreakpoints", {
            "source": {"path": source}, "breakpoints": [{"line": line}]}))
        done = client.response(client.request("configurationDone"))
        if not done.get("success"):
            return f"configurationDone failed: {done.get('message')}"
        if first.get("type") != "response":
            launched = client.response(start, 90)
            if not launched.get("success"):
                return f"{request} failed: {launched.get('message')}"
        stopped = client.event("stopped", 90)
        thread = stopped["body"].get("threadId")
        trace = client.response(client.request("stackTrace", {"threadId": thread, "levels": 20}))
        frames = trace.get("body", {}).get("stackFrames", [])
        if not frames:
            return f"no stack frames at the stop ({stopped['body']})"
        top = frames[0]
        where = f"{(top.get('source') or {}).get('path')}:{top.get('line')}"
        if top.get("line") != line or os.path.realpath((top.get("source") or {}).get("path", "")) != \
                os.path.realpath(source):
            return f"stopped at {where} ({stopped['body'].get('reason')}), not {source}:{line}"
        client.response(client.request("continue", {"threadId": thread}))
        client.event("terminated", 90)
        printed = "".join(m["body"].get("output", "") for m in client.seen
                          if m.get("type") == "event" and m.get("event") == "output"
                          and m["body"].get("category") in ("stdout", "stderr", "console"))
        client.response(client.request("disconnect", {}), 30)
        if output not in printed:
            return f"the program's output has no {output!r}: {printed[-500:]!r}"
        return None
    except (TimeoutError, EOFError, OSError) as e:
        return str(e)
    finally:
        client.close()
