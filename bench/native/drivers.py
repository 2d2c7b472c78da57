"""How bench/native/side_by_side.py drives each debugger through one round of a scenario: the
adapters over DAP on stdio (DapDebugger: strata-dap, lldb-dap-19), gdb over its MI (GdbMi), and
Strata's NativeDebugger facade through strata_bench_debugger (Facade). Python 3 standard
library only."""

import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_SRC = os.path.join(HERE, "targets", "bench_target.cpp")
JSON_ARGS = ["-c", "import json;json.dumps([1])"]
JSON_FUNCTION = "encoder_listencode_list"
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))
from bench_dap import Dap, Timeout, now_ms, shut_down, strata_log_events, wall_ns  # noqa: E402


def read_loop_ns(path):
    with open(path) as f:
        return int(f.read().split()[0])


# ---------------------------------------------------------------------------------------------
# DAP over stdio (bench_dap.Dap)


class DapDebugger:
    """One adapter speaking DAP over stdio (strata-dap, lldb-dap-19)."""

    def __init__(self, name, argv, launch_extra=None, log=None, breakdown=False):
        self.name = name
        self.argv = argv
        self.launch_extra = launch_extra or {}
        self.log = log
        self.breakdown = breakdown  # strata-dap only: --log FILE, to split a stop's latency
        self.adapter_log = None

    def start(self, program, args, breakpoints=None, functions=None):
        """Starts the adapter, launches and configures; returns the Dap (t_spawn: when the
        adapter's process was spawned, on now_ms's clock)."""
        argv = list(self.argv)
        if self.breakdown:
            fd, self.adapter_log = tempfile.mkstemp(prefix="strata-bench-log-")
            os.close(fd)
            argv += ["--log", self.adapter_log]
        dap = Dap(argv, log=self.log)
        dap.request("initialize", {"clientID": "strata-bench", "adapterID": self.name, "linesStartAt1": True,
                                   "columnsStartAt1": True, "pathFormat": "path",
                                   "supportsVariableType": True})
        launch = {"program": program, "args": args, "cwd": os.path.dirname(program) or ".",
                  "stopOnEntry": False}
        launch.update(self.launch_extra)
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
        return dap

    def go(self, dap):
        seq = dap.send("configurationDone")
        r = dap.wait(dap.launch_seq, 60)
        if not r.get("success"):
            raise RuntimeError("launch failed: %s" % r.get("message"))
        dap.wait(seq, 60)

    def finish(self, dap):
        dap.close()
        sent = strata_log_events(self.adapter_log, "stopped") if self.adapter_log else []
        if self.adapter_log:
            os.unlink(self.adapter_log)
            self.adapter_log = None
        return sent

    def hot(self, target, hits, line, loop_file):
        dap = self.start(target, ["hot", str(hits), loop_file], {TARGET_SRC: [{"line": line, "condition": "i < 0"}]})
        try:
            self.go(dap)
            e = dap.event(["exited", "terminated", "stopped"], 600)
            if e["event"] == "stopped":
                raise RuntimeError("stopped on a false condition")
        finally:
            self.finish(dap)
        return read_loop_ns(loop_file)

    def top_frame(self, dap, tid):
        frames = dap.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 1})["body"]["stackFrames"]
        return frames[0]["id"]

    def evaluate(self, dap, frame, expression):
        value = dap.request("evaluate", {"expression": expression, "frameId": frame, "context": "watch"})
        return int(re.match(r"-?\d+", value["body"]["result"]).group(0))

    def stops(self, target, line, marker, args, count):
        """[(stamp ns, receipt ns, adapter-sent ns or None)] for `count` stops on `line`;
        marker 'nth' stops once, on the 1000th pass."""
        bp = {"line": line, "hitCondition": "1000"} if marker == "nth" else {"line": line}
        dap = self.start(target, args, {TARGET_SRC: [bp]})
        out = []
        try:
            self.go(dap)
            for k in range(count):
                stop = dap.event(["stopped"], 120)
                frame = self.top_frame(dap, stop["body"]["threadId"])
                out.append([self.evaluate(dap, frame, "stamp_ns"), stop["_wall_ns"]])
                if marker == "nth" and self.evaluate(dap, frame, "i") != 999:
                    raise RuntimeError("stopped on another pass than the 1000th")
                if k + 1 < count:
                    dap.request("continue", {"threadId": stop["body"]["threadId"]})
        finally:
            sent = self.finish(dap)
        for row, at in zip(out, sent + [None] * len(out)):
            row.append(at)
        return out

    def deep(self, target, line):
        dap = self.start(target, ["deep", "1000"], {TARGET_SRC: [{"line": line}]})
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
            self.finish(dap)

    def json_launch(self, python):
        dap = self.start(python, JSON_ARGS, functions=[JSON_FUNCTION])
        try:
            self.go(dap)
            stop = dap.event(["stopped"], 60)
            frames = dap.request("stackTrace", {"threadId": stop["body"]["threadId"], "startFrame": 0,
                                                "levels": 1})["body"]["stackFrames"]
            if JSON_FUNCTION not in frames[0]["name"]:
                raise RuntimeError("stopped in %s" % frames[0]["name"])
            return stop["_at"] - dap.t_spawn
        finally:
            self.finish(dap)

    def vector(self, target, line, timeout):
        dap = self.start(target, ["vector", "100000"], {TARGET_SRC: [{"line": line}]})
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
            self.finish(dap)


# ---------------------------------------------------------------------------------------------
# gdb over MI


class Mi:
    def __init__(self, argv, log=None):
        self.t_spawn = now_ms()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0)
        self.token = 0
        self.lines = queue.Queue()
        self.log = log
        threading.Thread(target=self._read, daemon=True).start()
        self.expect(lambda l: l.startswith("(gdb)"), 30)

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.put((raw.decode(errors="replace").rstrip("\n"), now_ms(), len(raw), wall_ns()))
        self.lines.put(None)

    def expect(self, predicate, timeout):
        """(line, arrival on now_ms's clock, its bytes, arrival in CLOCK_REALTIME ns)."""
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
            if self.log:
                self.log.write("<- %s\n" % item[0][:300])
            if predicate(item[0]):
                return item

    def send(self, command):
        self.token += 1
        if self.log:
            self.log.write("-> %d%s\n" % (self.token, command))
        self.proc.stdin.write(b"%d%s\n" % (self.token, command.encode()))
        return self.token

    def command(self, command, timeout=60):
        token = self.send(command)
        item = self.expect(lambda l: re.match(r"%d\^" % token, l) is not None, timeout)
        if item[0].startswith("%d^error" % token):
            raise RuntimeError("gdb: %s: %s" % (command, item[0]))
        return item

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

    def evaluate(self, mi, expression):
        value = mi.command("-data-evaluate-expression %s" % expression)[0]
        return int(re.search(r'value="(-?\d+)"', value).group(1))

    def hot(self, target, hits, line, loop_file):
        mi = self.start(target, ["hot", str(hits), loop_file])
        try:
            mi.command('-break-insert -c "i < 0" %s:%d' % (TARGET_SRC, line))
            mi.command("-exec-run")
            line_ = self.stopped(mi, 600)[0]
            if "exited" not in line_:
                raise RuntimeError("gdb stopped: " + line_)
        finally:
            mi.close()
        return read_loop_ns(loop_file)

    def stops(self, target, line, marker, args, count):
        mi = self.start(target, args)
        out = []
        try:
            # -i 999: ignore 999 hits, stop on the 1000th, as DAP's hitCondition "1000".
            mi.command("-break-insert %s%s:%d" % ("-i 999 " if marker == "nth" else "", TARGET_SRC, line))
            mi.command("-exec-run")
            for k in range(count):
                wall = self.stopped(mi, 120)[3]
                out.append([self.evaluate(mi, "stamp_ns"), wall, None])
                if marker == "nth" and self.evaluate(mi, "i") != 999:
                    raise RuntimeError("stopped on another pass than the 1000th")
                if k + 1 < count:
                    mi.command("-exec-continue")
        finally:
            mi.close()
        return out

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
                out = mi.command("-stack-list-frames %d %d" % (seen, seen + 19), 120)[0]
                n = out.count("frame={")
                seen += n
                if n < 20:
                    break
            return first, now_ms() - t0, seen
        finally:
            mi.close()

    def json_launch(self, python):
        mi = self.start(python, JSON_ARGS)
        try:
            mi.command("-break-insert -f %s" % JSON_FUNCTION)
            mi.command("-exec-run")
            line, at = self.stopped(mi, 60)[:2]
            if JSON_FUNCTION not in line:
                raise RuntimeError("gdb stopped: " + line[:200])
            return at - mi.t_spawn
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
                out, at, size, _ = mi.command("-var-list-children --all-values big", timeout)
            except Timeout:
                return None, None, 0
            return at - t0, size, out.count("child={")
        finally:
            mi.close()


# ---------------------------------------------------------------------------------------------
# Strata's NativeDebugger facade without DAP (strata_bench_debugger), one round per call: the
# floor under strata-dap's column, without the adapter and its transport.


class Facade:
    name = "strata-facade"

    def __init__(self, path, python, hits, pause_ms, stops):
        self.path = path
        self.options = ["--python", python, "--hot-hits", str(hits), "--pause-ms", str(pause_ms),
                        "--stops", str(stops)]

    def run(self, only):
        """{row name: [every value of the round]}."""
        out = subprocess.run([self.path, "--rounds", "1", "--values", "--only", only] + self.options,
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip() or "strata_bench_debugger failed")
        rows, name = {}, None
        for line in out.stdout.splitlines():
            m = re.match(r"(.*?)\s+min\s+[\d.]+\s+median", line)
            if m:
                name = m.group(1).strip()
            elif line.startswith("  values:") and name:
                rows[name] = [float(v) for v in line.split()[1:]]
        return rows

    def hot_rate(self):
        return self.run("hot")["false condition on a hot line, hits/s"][0]

    def latencies(self, marker):
        """{row: [ms, ...]} for the stop scenario (first, next) or nth."""
        if marker == "nth":
            return {"nth": self.run("nth")["1000th hit -> stopped callback"]}
        rows = self.run("stop")
        return {"first": rows["first stop after the pause -> stopped callback"],
                "next": rows.get("next stops (resume -> same line) -> stopped callback", [])}

    def deep(self, target, line):
        rows = self.run("deep")
        return (rows["stackTrace first page of 20 at depth 1000"][0],
                rows["stackTrace paging through the rest (20 a page)"][0], 0)

    def json_launch(self, python):
        return self.run("json")["python3.12 launch -> stop in _json.so"][0]

    def vector(self, target, line, timeout):
        rows = self.run("vector")
        return (rows["unpaged variables on a 100k std::vector"][0], rows["its answer (approximate JSON size)"][0] * 1024,
                rows["children in it"][0])
