#!/usr/bin/env python3
"""Native debugging side by side: strata-dap, lldb-dap-19 and gdb on the same scenarios.

Every scenario runs against each debugger in the same invocation, one fresh debugger and one
fresh process a round, min/median of --rounds rounds:

  hot     a false-condition breakpoint on a hot line: hits per second (run time minus a
          plain run of the same program measured in the same round)
  nth     a breakpoint that stops on the 1000th hit: from the moment the program reached
          the line (it stamps CLOCK_MONOTONIC just before) to the `stopped` event
  deep    1000-deep recursion: the first `stackTrace` page of 20, then paging through all
  json    python3.12 -c "import json;json.dumps([1])" with a function breakpoint on
          encoder_listencode_list (_json.so, loaded later): launch request to `stopped`
  vector  an unpaged `variables` request on a 100k std::vector: time and bytes answered

strata-dap and lldb-dap-19 are driven over DAP (stdio); gdb over its MI (gdb --interpreter=mi3).
Python 3 standard library only. Installs lldb-19 with apt-get when lldb-dap-19 is missing.
"""

import argparse
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TARGET_SRC = os.path.join(HERE, "targets", "bench_target.cpp")
JSON_ARGS = ["-c", "import json;json.dumps([1])"]
JSON_FUNCTION = "encoder_listencode_list"


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


class Timeout(Exception):
    pass


def now_ms():
    return time.monotonic_ns() / 1e6


def marker_line(marker):
    with open(TARGET_SRC) as f:
        for n, text in enumerate(f, 1):
            if "// @bp:" + marker in text:
                return n
    raise SystemExit("no marker %s in %s" % (marker, TARGET_SRC))


def plain_run_ms(argv):
    t0 = now_ms()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return now_ms() - t0


# ---------------------------------------------------------------------------------------------
# DAP over stdio


class Dap:
    def __init__(self, argv, log=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0)
        self.seq = 0
        self.responses = {}
        self.events = queue.Queue()
        self.cv = threading.Condition()
        self.sizes = {}  # request_seq -> bytes of the response body
        self.log = log
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        out = self.proc.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                c = out.read(1)
                if not c:
                    self.events.put(None)
                    with self.cv:
                        self.cv.notify_all()
                    return
                header += c
            m = re.search(rb"Content-Length: *(\d+)", header)
            length = int(m.group(1))
            body = b""
            while len(body) < length:
                chunk = out.read(length - len(body))
                if not chunk:
                    self.events.put(None)
                    return
                body += chunk
            msg = json.loads(body)
            msg["_at"] = now_ms()
            if self.log:
                self.log.write("<- %s\n" % body[:300].decode(errors="replace"))
            if msg.get("type") == "response":
                with self.cv:
                    self.sizes[msg["request_seq"]] = length
                    self.responses[msg["request_seq"]] = msg
                    self.cv.notify_all()
            elif msg.get("type") == "event":
                self.events.put(msg)
            elif msg.get("type") == "request":  # reverse requests: decline
                self._write({"type": "response", "request_seq": msg["seq"], "success": False,
                             "command": msg.get("command"), "message": "not supported"})

    def _write(self, msg):
        self.seq += 1
        msg["seq"] = self.seq
        data = json.dumps(msg).encode()
        if self.log:
            self.log.write("-> %s\n" % data[:300].decode(errors="replace"))
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        return self.seq

    def send(self, command, arguments=None):
        return self._write({"type": "request", "command": command, "arguments": arguments or {}})

    def wait(self, seq, timeout=60):
        deadline = time.monotonic() + timeout
        with self.cv:
            while seq not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None and seq not in self.responses:
                    raise Timeout("no response to request %d" % seq)
                self.cv.wait(min(left, 0.5))
            return self.responses[seq]

    def request(self, command, arguments=None, timeout=60):
        r = self.wait(self.send(command, arguments), timeout)
        if not r.get("success"):
            raise RuntimeError("%s failed: %s" % (command, r.get("message")))
        return r

    def event(self, names, timeout=60):
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
                raise Timeout("the adapter closed its output waiting for %s" % "/".join(names))
            if e.get("event") in names:
                return e

    def close(self):
        def ask():
            if self.proc.poll() is None:
                self.send("disconnect", {"terminateDebuggee": True})
        shut_down(self.proc, ask)


class DapDebugger:
    """One adapter speaking DAP over stdio (strata-dap, lldb-dap-19)."""

    def __init__(self, name, argv, launch_extra=None, log=None):
        self.name = name
        self.argv = argv
        self.launch_extra = launch_extra or {}
        self.log = log

    def start(self, program, args, breakpoints=None, functions=None):
        """Launches and configures; returns (dap, time the launch request was sent)."""
        dap = Dap(self.argv, self.log)
        dap.request("initialize", {"clientID": "strata-bench", "adapterID": self.name, "linesStartAt1": True,
                                   "columnsStartAt1": True, "pathFormat": "path",
                                   "supportsVariableType": True})
        launch = {"program": program, "args": args, "cwd": os.path.dirname(program) or ".",
                  "stopOnEntry": False}
        launch.update(self.launch_extra)
        t0 = now_ms()
        launch_seq = dap.send("launch", launch)
        dap.event(["initialized"], 30)
        for path, lines in (breakpoints or {}).items():
            r = dap.request("setBreakpoints", {"source": {"path": path}, "breakpoints": lines})
            # An adapter that runs the program without debugging it would make every number
            # here meaningless: a line breakpoint in the program itself must verify.
            if not all(b.get("verified") for b in r["body"].get("breakpoints", [])):
                raise RuntimeError("breakpoint not verified: %s" % r["body"].get("breakpoints"))
        if functions:
            dap.request("setFunctionBreakpoints", {"breakpoints": [{"name": f} for f in functions]})
        dap.launch_seq = launch_seq
        return dap, t0

    def go(self, dap):
        seq = dap.send("configurationDone")
        t = now_ms()
        r = dap.wait(dap.launch_seq, 60)
        if not r.get("success"):
            raise RuntimeError("launch failed: %s" % r.get("message"))
        dap.wait(seq, 60)
        return t

    def hot(self, target, hits, line):
        dap, _ = self.start(target, ["hot", str(hits)], {TARGET_SRC: [{"line": line, "condition": "i < 0"}]})
        try:
            t0 = self.go(dap)
            e = dap.event(["exited", "terminated", "stopped"], 600)
            if e["event"] == "stopped":
                raise RuntimeError("stopped on a false condition")
            return e["_at"] - t0
        finally:
            dap.close()

    def top_frame(self, dap, tid):
        frames = dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 1})["body"]["stackFrames"]
        return frames[0]["id"]

    def nth(self, target, line):
        dap, _ = self.start(target, ["nth", "2000"], {TARGET_SRC: [{"line": line, "hitCondition": "1000"}]})
        try:
            self.go(dap)
            stop = dap.event(["stopped"], 120)
            frame = self.top_frame(dap, stop["body"]["threadId"])
            value = dap.request("evaluate", {"expression": "stamp_ns", "frameId": frame, "context": "watch"})
            stamp = int(re.match(r"-?\d+", value["body"]["result"]).group(0)) / 1e6
            return stop["_at"] - stamp
        finally:
            dap.close()

    def deep(self, target, line):
        dap, _ = self.start(target, ["deep", "1000"], {TARGET_SRC: [{"line": line}]})
        try:
            self.go(dap)
            stop = dap.event(["stopped"], 60)
            tid = stop["body"]["threadId"]
            t0 = now_ms()
            body = dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 20})["body"]
            first = now_ms() - t0
            seen = len(body["stackFrames"])
            t0 = now_ms()
            while True:
                page = dap.request("stackTrace", {"threadId": tid, "startFrame": seen, "levels": 20},
                                   timeout=120)["body"]["stackFrames"]
                seen += len(page)
                if len(page) < 20:
                    break
            return first, now_ms() - t0, seen
        finally:
            dap.close()

    def json_launch(self, python):
        dap, t0 = self.start(python, JSON_ARGS, functions=[JSON_FUNCTION])
        try:
            self.go(dap)
            stop = dap.event(["stopped"], 60)
            frames = dap.request("stackTrace", {"threadId": stop["body"]["threadId"], "startFrame": 0,
                                                "levels": 1})["body"]["stackFrames"]
            if JSON_FUNCTION not in frames[0]["name"]:
                raise RuntimeError("stopped in %s" % frames[0]["name"])
            return stop["_at"] - t0
        finally:
            dap.close()

    def vector(self, target, line, timeout):
        dap, _ = self.start(target, ["vector", "100000"], {TARGET_SRC: [{"line": line}]})
        try:
            self.go(dap)
            stop = dap.event(["stopped"], 60)
            frame = self.top_frame(dap, stop["body"]["threadId"])
            scopes = dap.request("scopes", {"frameId": frame})["body"]["scopes"]
            ref = None
            for v in dap.request("variables", {"variablesReference": scopes[0]["variablesReference"]})["body"]["variables"]:
                if v["name"] == "big":
                    ref = v["variablesReference"]
            if not ref:
                raise RuntimeError("no local 'big'")
            t0 = now_ms()
            seq = dap.send("variables", {"variablesReference": ref})
            try:
                r = dap.wait(seq, timeout)
            except Timeout:
                return None, None, 0
            return now_ms() - t0, dap.sizes[seq], len(r.get("body", {}).get("variables", []))
        finally:
            dap.close()


# ---------------------------------------------------------------------------------------------
# gdb over MI


class Mi:
    def __init__(self, argv, log=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0)
        self.token = 0
        self.lines = queue.Queue()
        self.log = log
        threading.Thread(target=self._read, daemon=True).start()
        self.expect(lambda l: l.startswith("(gdb)"), 30)

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.put((raw.decode(errors="replace").rstrip("\n"), now_ms(), len(raw)))
        self.lines.put(None)

    def expect(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("gdb: nothing matched")
            try:
                item = self.lines.get(timeout=left)
            except queue.Empty:
                raise Timeout("gdb: nothing matched")
            if item is None:
                raise Timeout("gdb exited")
            line, at, size = item
            if self.log:
                self.log.write("<- %s\n" % line[:300])
            if predicate(line):
                return line, at, size

    def send(self, command):
        self.token += 1
        if self.log:
            self.log.write("-> %d%s\n" % (self.token, command))
        self.proc.stdin.write(b"%d%s\n" % (self.token, command.encode()))
        return self.token

    def command(self, command, timeout=60):
        token = self.send(command)
        line, at, size = self.expect(lambda l: re.match(r"%d\^" % token, l) is not None, timeout)
        if line.startswith("%d^error" % token):
            raise RuntimeError("gdb: %s: %s" % (command, line))
        return line, at, size

    def close(self):
        shut_down(self.proc, lambda: self.proc.stdin.write(b"-gdb-exit\n"))


class GdbMi:
    name = "gdb"

    def __init__(self, gdb="gdb", log=None):
        self.gdb = gdb
        self.log = log

    def start(self, program, args):
        mi = Mi([self.gdb, "--interpreter=mi3", "-q", "-nx"], self.log)
        # gdb splits the argument line on blanks without a shell: keep its shell (its default)
        # for an argument with blanks, and quote it for that shell.
        shell = any(re.search(r"[\s;\"'()\[\]]", a) for a in args)
        if not shell:
            mi.command("-gdb-set startup-with-shell off")
        mi.command("-gdb-set confirm off")
        mi.command("-enable-pretty-printing")
        mi.command("-file-exec-and-symbols %s" % program)
        quoted = ["'%s'" % a.replace("'", "'\\''") if shell else a for a in args]
        mi.command("-exec-arguments %s" % " ".join(quoted))
        return mi

    def stopped(self, mi, timeout):
        return mi.expect(lambda l: l.startswith("*stopped"), timeout)

    def run_to_main(self, mi):
        mi.command("-exec-run --start")
        self.stopped(mi, 60)

    def hot(self, target, hits, line):
        mi = self.start(target, ["hot", str(hits)])
        try:
            self.run_to_main(mi)
            mi.command('-break-insert -c "i < 0" %s:%d' % (TARGET_SRC, line))
            _, t0, _ = mi.command("-exec-continue")
            line_, at, _ = self.stopped(mi, 600)
            if "exited" not in line_:
                raise RuntimeError("gdb stopped: " + line_)
            return at - t0
        finally:
            mi.close()

    def nth(self, target, line):
        mi = self.start(target, ["nth", "2000"])
        try:
            self.run_to_main(mi)
            mi.command("-break-insert -i 999 %s:%d" % (TARGET_SRC, line))
            mi.command("-exec-continue")
            _, at, _ = self.stopped(mi, 120)
            value, _, _ = mi.command("-data-evaluate-expression stamp_ns")
            stamp = int(re.search(r'value="(-?\d+)"', value).group(1)) / 1e6
            return at - stamp
        finally:
            mi.close()

    def deep(self, target, line):
        mi = self.start(target, ["deep", "1000"])
        try:
            mi.command("-break-insert %s:%d" % (TARGET_SRC, line))
            mi.command("-exec-run")
            self.stopped(mi, 60)
            t0 = now_ms()
            mi.command("-stack-list-frames 0 19")
            first = now_ms() - t0
            seen = 20
            t0 = now_ms()
            while True:
                out, _, _ = mi.command("-stack-list-frames %d %d" % (seen, seen + 19), 120)
                n = out.count("frame={")
                seen += n
                if n < 20:
                    break
            return first, now_ms() - t0, seen
        finally:
            mi.close()

    def json_launch(self, python):
        t0 = now_ms()
        mi = self.start(python, JSON_ARGS)
        try:
            mi.command("-break-insert -f %s" % JSON_FUNCTION)
            mi.command("-exec-run")
            line, at, _ = self.stopped(mi, 60)
            if JSON_FUNCTION not in line:
                raise RuntimeError("gdb stopped: " + line[:200])
            return at - t0
        finally:
            mi.close()

    def vector(self, target, line, timeout):
        mi = self.start(target, ["vector", "100000"])
        try:
            mi.command("-break-insert %s:%d" % (TARGET_SRC, line))
            mi.command("-exec-run")
            self.stopped(mi, 60)
            mi.command("-var-create big * big")
            t0 = now_ms()
            try:
                out, at, size = mi.command("-var-list-children --all-values big", timeout)
            except Timeout:
                return None, None, 0
            return at - t0, size, out.count("child={")
        finally:
            mi.close()


# ---------------------------------------------------------------------------------------------
# Strata's NativeDebugger facade without DAP (strata_bench_debugger), one round per call: the
# column to compare with while strata-dap has no native route, and the floor under it.


class Facade:
    name = "strata-facade"

    def __init__(self, path, python):
        self.path = path
        self.python = python

    def run(self, only):
        out = subprocess.run([self.path, "--rounds", "1", "--only", only, "--python", self.python],
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip() or "strata_bench_debugger failed")
        rows = {}
        for line in out.stdout.splitlines():
            m = re.match(r"(.*?)\s+min\s+([\d.]+)\s+median", line)
            if m:
                rows[m.group(1).strip()] = float(m.group(2))
        return rows

    def hot_rate(self):
        return self.run("hot")["false condition on a hot line, hits/s"]

    def nth(self, target, line):
        return self.run("nth")["1000th hit -> stopped callback"]

    def deep(self, target, line):
        rows = self.run("deep")
        return rows["stackTrace first page of 20 at depth 1000"], rows["stackTrace paging through the rest (20 a page)"], 0

    def json_launch(self, python):
        return self.run("json")["python3.12 launch -> stop in _json.so"]

    def vector(self, target, line, timeout):
        rows = self.run("vector")
        return (rows["unpaged variables on a 100k std::vector"], rows["its answer (approximate JSON size)"] * 1024,
                rows["children in it"])


# ---------------------------------------------------------------------------------------------


def ensure_lldb_dap(explicit):
    if explicit:
        return explicit
    found = shutil.which("lldb-dap-19") or shutil.which("lldb-dap")
    if found:
        return found
    print("lldb-dap-19 is missing: installing Debian's lldb-19 (apt-get install -y lldb-19)", flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(sudo + ["apt-get", "install", "-y", "lldb-19"], env=env).returncode != 0:
        subprocess.run(sudo + ["apt-get", "update"], env=env)
        subprocess.run(sudo + ["apt-get", "install", "-y", "lldb-19"], env=env)
    return shutil.which("lldb-dap-19") or shutil.which("lldb-dap")


def build_target(directory):
    out = os.path.join(directory, "bench_target")
    subprocess.run(["g++", "-g", "-O0", "-fno-omit-frame-pointer", "-o", out, TARGET_SRC], check=True)
    return out


def summary(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "—"
    return (fmt % min(values)) + " / " + (fmt % statistics.median(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--debuggers", default="strata,lldb-dap,gdb",
                        help="comma separated: strata,strata-facade,lldb-dap,gdb")
    parser.add_argument("--facade", default=os.path.join(ROOT, "build", "release", "bench", "native",
                                                         "strata_bench_debugger"))
    parser.add_argument("--scenarios", default="hot,nth,deep,json,vector")
    parser.add_argument("--strata", default=os.path.join(ROOT, "build", "release", "adapter", "strata-dap"))
    parser.add_argument("--lldb-dap", default=None, help="default: lldb-dap-19 on PATH (installed if missing)")
    parser.add_argument("--gdb", default="gdb")
    parser.add_argument("--python", default=os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python3.12"))
    parser.add_argument("--hot-hits", default="strata=100000,lldb-dap=2000,gdb=5000",
                        help="hits per round of the hot scenario, per debugger")
    parser.add_argument("--vector-timeout", type=float, default=30, help="seconds before an answer counts as none")
    parser.add_argument("--log", default=None, help="write every message to this file")
    args = parser.parse_args()

    log = open(args.log, "w") if args.log else None
    names = [n for n in args.debuggers.split(",") if n]
    scenarios = [s for s in args.scenarios.split(",") if s]
    hot_hits = dict(kv.split("=") for kv in args.hot_hits.split(","))

    debuggers = {}
    for n in names:
        if n == "strata":
            if not os.access(args.strata, os.X_OK):
                print("strata-dap not found at %s (cmake --preset release && ninja -C build/release strata-dap)"
                      % args.strata)
                continue
            debuggers[n] = DapDebugger("strata", [args.strata, "--stdio"], log=log)
        elif n == "strata-facade":
            if not os.access(args.facade, os.X_OK):
                print("strata_bench_debugger not found at %s (ninja -C build/release strata_bench_debugger)"
                      % args.facade)
                continue
            debuggers[n] = Facade(args.facade, args.python)
        elif n == "lldb-dap":
            path = ensure_lldb_dap(args.lldb_dap)
            if not path:
                print("lldb-dap could not be installed; its column stays empty")
                continue
            debuggers[n] = DapDebugger("lldb-dap", [path], log=log)
        elif n == "gdb":
            if not shutil.which(args.gdb):
                print("gdb not found; its column stays empty")
                continue
            debuggers[n] = GdbMi(args.gdb, log)

    workdir = tempfile.mkdtemp(prefix="strata-bench-")
    target = build_target(workdir)
    lines = {m: marker_line(m) for m in ("hot", "nth", "deep", "vector")}
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    print("rounds: %d, load average at start: %s, target: %s" % (args.rounds, " ".join(load), target), flush=True)

    results = {}  # (scenario row, debugger) -> list of values

    def record(row, name, value):
        results.setdefault((row, name), []).append(value)

    for r in range(args.rounds):
        for name, dbg in debuggers.items():
            def attempt(label, fn):
                try:
                    return fn()
                except Exception as e:  # a failure is reported and leaves its cell empty
                    print("  %s %s round %d: %s" % (name, label, r + 1, e), flush=True)
                    return None

            if "hot" in scenarios and hasattr(dbg, "hot_rate"):
                record("hot", name, attempt("hot", dbg.hot_rate))
            elif "hot" in scenarios:
                hits = int(hot_hits.get(name, 2000))
                plain = plain_run_ms([target, "hot", str(hits)])
                ms = attempt("hot", lambda: dbg.hot(target, hits, lines["hot"]))
                if ms is not None:
                    record("hot", name, hits / max((ms - plain) / 1000, 1e-9))
            if "nth" in scenarios:
                record("nth", name, attempt("nth", lambda: dbg.nth(target, lines["nth"])))
            if "deep" in scenarios:
                out = attempt("deep", lambda: dbg.deep(target, lines["deep"]))
                if out:
                    record("deep-first", name, out[0])
                    record("deep-all", name, out[1])
                    record("deep-count", name, out[2])
            if "json" in scenarios and os.access(args.python, os.X_OK):
                record("json", name, attempt("json", lambda: dbg.json_launch(args.python)))
            if "vector" in scenarios:
                out = attempt("vector", lambda: dbg.vector(target, lines["vector"], args.vector_timeout))
                if out:
                    answered = out[0] is not None
                    record("vector-ms", name, out[0] if answered else None)
                    record("vector-kb", name, out[1] / 1024 if answered else None)
                    record("vector-n", name, out[2] if answered else None)
        print("round %d done" % (r + 1), flush=True)

    rows = [
        ("hot", "false-condition breakpoint on a hot line, hits/s (max / median)", "%.0f"),
        ("nth", "stop on the 1000th hit → stopped, ms", "%.2f"),
        ("deep-first", "stackTrace, first page of 20 at depth 1000, ms", "%.2f"),
        ("deep-all", "stackTrace, paging through all 1000 frames (20 a page), ms", "%.1f"),
        ("json", "python3.12 launch → stop in _json.so (encoder_listencode_list), ms", "%.0f"),
        ("vector-ms", "unpaged variables on a 100k std::vector, ms", "%.1f"),
        ("vector-kb", "  its answer, KiB", "%.1f"),
        ("vector-n", "  children in the answer", "%.0f"),
    ]
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    print()
    print("min / median of %d rounds; load average at the end: %s" % (args.rounds, " ".join(load)))
    print()
    print("| scenario | " + " | ".join(debuggers) + " |")
    print("| --- | " + " | ".join("---:" for _ in debuggers) + " |")
    for key, label, fmt in rows:
        if not any((key, n) in results for n in debuggers):
            continue
        cells = []
        for n in debuggers:
            values = results.get((key, n), [])
            if key == "hot" and values:
                cells.append((fmt % max(values)) + " / " + (fmt % statistics.median(values)))
            elif key.startswith("vector") and values and all(v is None for v in values):
                cells.append("no answer in %.0f s" % args.vector_timeout)
            elif key == "vector-ms" and any(v is None for v in values):
                answered = sum(v is not None for v in values)
                cells.append(summary(values, fmt) + " (%d of %d answered in %.0f s)"
                             % (answered, len(values), args.vector_timeout))
            else:
                cells.append(summary(values, fmt))
        print("| %s | %s |" % (label, " | ".join(cells)))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
