"""The GPU check's CUDA error stops through strata-dap, over DAP on stdio: the native example
oob_write and a PyTorch out-of-bounds index, each launched with the collector injected
(CUDA_INJECTION64_PATH), must stop with reason `exception` at the program's line with the
error's name, and the last kernel in exceptionInfo. Prints PASS/FAIL/SKIP lines; exits 1 when
a check failed.

  python3 gpu_check_error_stop.py --dap DIR/bin/strata-dap --collector DIR/bin/libstrata_cupti.so \
      --examples DIR/examples --sources DIR/examples-src [--python python3] [--work /tmp/x]

The Python case needs the agent package (STRATA_AGENT_PYTHONPATH) and torch with CUDA.
"""
import json
import os
import queue
import subprocess
import sys
import threading

import check_report
from check_report import STICKY, arguments, check, marker_line, say, session_checks, torch_missing


class Dap:
    """strata-dap on stdio: requests answered in order, events kept."""

    def __init__(self, dap):
        self.proc = subprocess.Popen([dap, "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.seq = 0
        self.messages = queue.Queue()
        self.events = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            self.messages.put(json.loads(out.read(length)))

    def _next(self, timeout):
        m = self.messages.get(timeout=timeout)
        if m is None:
            raise RuntimeError("strata-dap closed its output")
        if m.get("type") == "event":
            self.events.append(m)
        return m

    def request(self, command, timeout=60, **arguments):
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command, "arguments": arguments}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        while True:
            m = self._next(timeout)
            if m.get("type") == "response" and m.get("request_seq") == self.seq:
                if not m.get("success"):
                    raise RuntimeError(f"{command}: {m.get('message')}")
                return m.get("body") or {}

    def event(self, name, timeout=120):
        for e in self.events:
            if e["event"] == name:
                self.events.remove(e)
                return e.get("body") or {}
        while True:
            m = self._next(timeout)
            if m.get("type") == "event" and m["event"] == name:
                self.events.remove(m)
                return m.get("body") or {}

    def output(self):
        return "".join(e["body"].get("output", "") for e in self.events if e["event"] == "output")

    def close(self):
        try:
            self.request("disconnect", timeout=10, terminateDebuggee=True)
        except Exception:
            pass
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=15)
        except Exception:
            self.proc.kill()


def stop_of(dap_path, launch):
    """Launches, waits for the first stop; (client, stopped body, top frame, exceptionInfo)."""
    c = Dap(dap_path)
    c.request("initialize", adapterID="strata", linesStartAt1=True, columnsStartAt1=True, pathFormat="path")
    c.request("launch", **launch)
    c.event("initialized")
    c.request("configurationDone")
    stopped = c.event("stopped", timeout=60)
    frames = c.request("stackTrace", threadId=stopped["threadId"], levels=20)["stackFrames"]
    info = {}
    if stopped.get("reason") == "exception":
        info = c.request("exceptionInfo", threadId=stopped["threadId"])
    return c, stopped, frames, info


def check_native(args, env):
    source = os.path.join(args.sources, "oob_write.cu")
    line = marker_line(source, "// @error:sync")

    def checks(c, stopped, frames, info):
        top = frames[0] if frames else {}
        detail = f"reason {stopped.get('reason')}, text {stopped.get('text')}, top {top.get('name')} " \
                 f"{os.path.basename((top.get('source') or {}).get('path', '?'))}:{top.get('line')}"
        check("native CUDA error stop", stopped.get("reason") == "exception" and
              stopped.get("text") in STICKY.values(), detail)
        check("native CUDA error stop at the program's line", top.get("name") == "main" and top.get("line") == line and
              (top.get("source") or {}).get("path", "").endswith("oob_write.cu"), f"{detail} (marked: {line})")
        trace = (info.get("details") or {}).get("stackTrace", "")
        check("native exceptionInfo names the API and the kernel",
              info.get("exceptionId") == stopped.get("text") and "cudaDeviceSynchronize" in trace and
              "last kernel launched on this thread: fill(int*, long long)" in trace, json.dumps(info)[:600])
        c.request("continue", threadId=stopped["threadId"])
        exited = c.event("exited", timeout=60)
        said = f"returned {stopped.get('text')} ("
        check("native program goes on after the stop", exited.get("exitCode") == 1 and said in c.output(),
              f"exit {exited.get('exitCode')}")

    session_checks("native CUDA error stop",
                   lambda: stop_of(args.dap, {"program": os.path.join(args.examples, "oob_write"), "env": env}), checks)


TORCH_PROGRAM = '''\
import torch
x = torch.zeros(4, device="cuda")
index = torch.tensor([10], device="cuda")
x[index] = 1.0  # @error:index (a device-side assert in torch's indexing kernel)
torch.cuda.synchronize()  # @error:torch
print("not reached: the synchronize raised")
'''


def check_python(args, env, work):
    missing = torch_missing(args.python, agent=True)
    if missing:
        say("SKIP", "Python CUDA error stop", missing)
        return
    script = os.path.join(work, "cuda_error_torch.py")
    with open(script, "w") as f:
        f.write(TORCH_PROGRAM)
    lines = {marker_line(script, "# @error:torch"): "synchronize", marker_line(script, "# @error:index"): "index"}

    def checks(c, stopped, frames, info):
        top = frames[0] if frames else {}
        detail = f"reason {stopped.get('reason')}, text {stopped.get('text')}, top {top.get('name')} " \
                 f"{os.path.basename((top.get('source') or {}).get('path', '?'))}:{top.get('line')}; " \
                 f"description {stopped.get('description')}"
        check("Python CUDA error stop", stopped.get("reason") == "exception" and
              stopped.get("text") in ("cudaErrorAssert", "CUDA_ERROR_ASSERT"), detail)
        check("Python CUDA error stop at the program's line",
              (top.get("source") or {}).get("path") == script and top.get("line") in lines,
              f"{detail} (marked: {lines})")
        trace = (info.get("details") or {}).get("stackTrace", "")
        check("Python exceptionInfo names the last kernel", "last kernel launched on this thread: none" not in trace and
              "last kernel launched on this thread:" in trace, trace[-600:])
        c.request("continue", threadId=stopped["threadId"])
        exited = c.event("exited", timeout=60)
        check("Python program goes on after the stop (torch raises the error)", exited.get("exitCode") == 1 and
              "device-side assert" in c.output(), f"exit {exited.get('exitCode')}")

    session_checks("Python CUDA error stop",
                   lambda: stop_of(args.dap, {"program": script, "python": args.python, "env": env}), checks)


def main():
    args = arguments(("dap", "collector", "examples", "sources"), "strata-gpu-errors-")
    env = {"CUDA_INJECTION64_PATH": os.path.abspath(args.collector), "STRATA_GPU_DIR": args.work, "STRATA_GPU_MODE": "stacks"}
    check_native(args, env)
    check_python(args, env, args.work)
    return 1 if check_report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
