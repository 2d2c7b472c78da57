#!/usr/bin/env python3
"""Writes the session fuzzer's seeds (tests/fuzz/session_corpus/*.dap): realistic client sides
of DAP sessions, each a stream of Content-Length framed requests (and the odd response to a
reverse request). Run it after changing a session below; the files are committed."""
import json
import pathlib

OUT = pathlib.Path(__file__).resolve().parent / "session_corpus"

INIT = {"clientID": "vscode", "clientName": "Visual Studio Code", "adapterID": "strata",
        "pathFormat": "path", "linesStartAt1": True, "columnsStartAt1": True,
        "supportsVariableType": True, "supportsVariablePaging": True,
        "supportsRunInTerminalRequest": False, "supportsMemoryReferences": True,
        "supportsProgressReporting": True, "supportsInvalidatedEvent": True, "locale": "en"}


def frame(message):
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Client:
    def __init__(self):
        self.seq = 0
        self.out = b""

    def request(self, command, arguments=None, seq=None):
        self.seq += 1
        message = {"seq": self.seq if seq is None else seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        self.out += frame(message)

    def response(self, request_seq, command, success=True, body=None):
        self.seq += 1
        message = {"seq": self.seq, "type": "response", "request_seq": request_seq,
                   "success": success, "command": command}
        if body is not None:
            message["body"] = body
        self.out += frame(message)

    def raw(self, data):
        self.out += data


def native_debug():
    """A C program debugged in full: breakpoints first, stops, every inspection request."""
    c = Client()
    c.request("initialize", INIT)
    c.request("setBreakpoints", {"source": {"path": "/src/prog.c", "name": "prog.c"},
                                 "breakpoints": [{"line": 12}, {"line": 20, "condition": "i > 3"},
                                                 {"line": 31, "hitCondition": "5"},
                                                 {"line": 40, "logMessage": "i = {i}"}],
                                 "sourceModified": False})
    c.request("setFunctionBreakpoints", {"breakpoints": [{"name": "compute"}, {"name": "main", "condition": "argc > 1"}]})
    c.request("setExceptionBreakpoints", {"filters": ["uncaught"], "filterOptions": [{"filterId": "raised", "condition": "ValueError"}]})
    c.request("launch", {"type": "strata", "request": "launch", "name": "Debug prog", "program": "/bin/true",
                         "args": ["--size", "3"], "cwd": "/", "env": {"OMP_NUM_THREADS": "1", "LANG": None},
                         "stopOnEntry": True, "__configurationTarget": 6})
    c.request("configurationDone")
    c.request("threads")
    c.request("stackTrace", {"threadId": 1, "startFrame": 0, "levels": 20})
    c.request("scopes", {"frameId": 1})
    c.request("variables", {"variablesReference": 1})
    c.request("variables", {"variablesReference": 2, "filter": "indexed", "start": 0, "count": 2})
    c.request("evaluate", {"expression": "argc + 1", "frameId": 1, "context": "watch"})
    c.request("evaluate", {"expression": "&buffer[0]", "frameId": 1, "context": "hover"})
    c.request("setVariable", {"variablesReference": 1, "name": "v0", "value": "7"})
    c.request("setExpression", {"expression": "buffer[1]", "value": "0x41", "frameId": 1})
    c.request("completions", {"frameId": 1, "text": "buf", "column": 4})
    c.request("dataBreakpointInfo", {"variablesReference": 1, "name": "v0"})
    c.request("dataBreakpointInfo", {"name": "&counter", "frameId": 1, "bytes": 8, "asAddress": True})
    c.request("setDataBreakpoints", {"breakpoints": [{"dataId": "0x7ffd1000/4", "accessType": "write"}]})
    c.request("readMemory", {"memoryReference": "0x7ffd1000", "offset": 0, "count": 64})
    c.request("writeMemory", {"memoryReference": "0x7ffd1000", "offset": 4, "data": "AQIDBA==", "allowPartial": True})
    c.request("disassemble", {"memoryReference": "0x401136", "offset": 0, "instructionOffset": -4,
                              "instructionCount": 8, "resolveSymbols": True})
    c.request("setInstructionBreakpoints", {"breakpoints": [{"instructionReference": "0x401136", "offset": 4}]})
    c.request("modules", {"startModule": 0, "moduleCount": 2})
    c.request("loadedSources")
    c.request("source", {"source": {"sourceReference": 1}, "sourceReference": 1})
    c.request("stepInTargets", {"frameId": 1})
    c.request("stepIn", {"threadId": 1, "targetId": 1, "granularity": "line"})
    c.request("next", {"threadId": 1, "granularity": "instruction"})
    c.request("stackTrace", {"threadId": 1})
    c.request("scopes", {"frameId": 1})
    c.request("stepOut", {"threadId": 1, "singleThread": True})
    c.request("exceptionInfo", {"threadId": 1})
    c.request("continue", {"threadId": 1})
    c.request("pause", {"threadId": 1})
    c.request("stackTrace", {"threadId": 2, "startFrame": 1, "levels": 1})
    c.request("disconnect", {"restart": False, "terminateDebuggee": True})
    return c.out


def python_launch():
    """A Python module launched in the internal console, watched, then terminated."""
    c = Client()
    c.request("initialize", dict(INIT, clientID="nvim-dap", supportsVariablePaging=False))
    c.request("launch", {"module": "http.server", "args": ["8000"], "python": ["/bin/true", "-X", "dev"],
                         "justMyCode": False, "console": "internalConsole", "cwd": "/tmp"})
    c.request("setBreakpoints", {"source": {"path": "/usr/lib/python3.12/http/server.py"}, "lines": [100, 200]})
    c.request("setExceptionBreakpoints", {"filters": ["raised", "uncaught"]})
    c.request("configurationDone")
    c.request("threads")
    c.request("stackTrace", {"threadId": 1, "levels": 1})
    c.request("evaluate", {"expression": "import os; os.getpid()", "context": "repl"})
    c.request("evaluate", {"expression": "self.path", "frameId": 1, "context": "clipboard"})
    c.request("continue", {"threadId": 1, "singleThread": False})
    c.request("terminate", {"restart": False})
    c.request("disconnect")
    return c.out


def terminal_launch():
    """A launch into the client's terminal: the runInTerminal reverse request and its answer."""
    c = Client()
    c.request("initialize", dict(INIT, supportsRunInTerminalRequest=True))
    c.request("launch", {"program": "/bin/true", "console": "integratedTerminal", "noDebug": True})
    # The adapter's seq 1 and 2 are the initialize response and the initialized event.
    c.response(3, "runInTerminal", body={"processId": 31337, "shellProcessId": 31336})
    c.request("threads")
    c.request("disconnect", {"terminateDebuggee": True})
    return c.out


def terminal_refused():
    """The client cannot open a terminal: the launch fails; then a cancel of nothing."""
    c = Client()
    c.request("initialize", dict(INIT, supportsRunInTerminalRequest=True))
    c.request("launch", {"program": "/bin/true", "console": "externalTerminal"})
    c.response(3, "runInTerminal", success=False)
    c.request("cancel", {"requestId": 2})
    c.request("disconnect")
    return c.out


def cancel_launch():
    """A launch cancelled while it waits on the client's terminal, then a second cancel."""
    c = Client()
    c.request("initialize", dict(INIT, supportsRunInTerminalRequest=True))
    c.request("launch", {"program": "/bin/true", "console": "integratedTerminal"})
    c.request("cancel", {"requestId": 2})
    c.request("cancel", {"requestId": 2, "progressId": "p1"})
    c.response(3, "runInTerminal", body={"processId": 4242})
    c.request("threads")
    c.request("disconnect")
    return c.out


def attach_native():
    """Attach to a running process by pid, look around, pause, and leave it running."""
    c = Client()
    c.request("initialize", INIT)
    c.request("attach", {"processId": "4242", "stopOnEntry": False})
    c.request("configurationDone")
    c.request("threads")
    c.request("pause", {"threadId": 2})
    c.request("stackTrace", {"threadId": 2, "startFrame": 0, "levels": 5})
    c.request("scopes", {"frameId": 1})
    c.request("variables", {"variablesReference": 1, "filter": "named"})
    c.request("modules")
    c.request("continue", {"threadId": 2, "singleThread": True})
    c.request("disconnect", {"terminateDebuggee": False})
    return c.out


def attach_python():
    """Attach to a Python program that listens, and one that dials in."""
    c = Client()
    c.request("initialize", INIT)
    c.request("attach", {"connect": {"host": "127.0.0.1", "port": 5678}, "justMyCode": True})
    c.request("setBreakpoints", {"source": {"path": "/src/train.py"}, "breakpoints": [{"line": 20}]})
    c.request("attach", {"listen": {"host": "::1", "port": 0}, "timeout": 5, "token": "secret"})
    c.request("disconnect")
    return c.out


def stale_ids():
    """Frame and variables ids used after the program ran again, and ids never given out."""
    c = Client()
    c.request("initialize", INIT)
    c.request("launch", {"program": "true", "stopOnEntry": True})
    c.request("configurationDone")
    c.request("stackTrace", {"threadId": 1})
    c.request("scopes", {"frameId": 1})
    c.request("continue", {"threadId": 1})
    c.request("scopes", {"frameId": 1})
    c.request("variables", {"variablesReference": 1})
    c.request("evaluate", {"expression": "x", "frameId": 1})
    c.request("source", {"sourceReference": 999})
    c.request("stackTrace", {"threadId": 1})
    c.request("stackTrace", {"threadId": 1})
    c.request("next", {"threadId": 1})
    c.request("scopes", {"frameId": 2})
    c.request("disconnect")
    return c.out


def late_stack():
    """A stack trace answered after a continue (the fake holds that reply back for these
    arguments), then scopes on the frame id it would have handed out."""
    c = Client()
    c.request("initialize", INIT)
    c.request("launch", {"program": "/bin/true", "stopOnEntry": True})
    c.request("stackTrace", {"threadId": 21})
    c.request("continue", {"threadId": 2})
    for _ in range(4):
        c.request("threads")
    c.request("scopes", {"frameId": 1})
    c.request("disconnect")
    return c.out


def huge_numbers():
    """Paging and sizes at the ends of the int64 range, with a program to ask."""
    big = 9223372036854775807
    c = Client()
    c.request("initialize", INIT)
    c.request("launch", {"program": "/bin/true", "stopOnEntry": True})
    c.request("modules", {"startModule": big, "moduleCount": big})
    c.request("modules", {"startModule": 1, "moduleCount": big})
    c.request("stackTrace", {"threadId": big, "startFrame": big, "levels": big})
    c.request("variables", {"variablesReference": big, "start": big, "count": big})
    c.request("readMemory", {"memoryReference": "0xffffffffffffffff", "offset": big, "count": big})
    c.request("disassemble", {"memoryReference": "0x0", "offset": -big, "instructionOffset": -big,
                              "instructionCount": big})
    c.request("dataBreakpointInfo", {"name": "x", "bytes": big, "frameId": -big})
    c.request("cancel", {"requestId": -big})
    c.request("disconnect")
    return c.out


def no_debuggee():
    """Every request after initialize with nothing launched, then after the program exited."""
    c = Client()
    c.request("initialize", INIT)
    for command, args in [("threads", None), ("stackTrace", {"threadId": 1}), ("continue", {"threadId": 1}),
                          ("readMemory", {"memoryReference": "0x0", "count": 1}),
                          ("disassemble", {"memoryReference": "0x0", "instructionCount": 1}),
                          ("modules", {}), ("loadedSources", {}), ("configurationDone", {}),
                          ("setDataBreakpoints", {"breakpoints": []}),
                          ("setInstructionBreakpoints", {"breakpoints": []}),
                          ("terminate", {})]:
        c.request(command, args)
    c.request("launch", {"program": "/bin/true", "noDebug": True})
    c.request("terminate")
    c.request("threads")
    c.request("evaluate", {"expression": "1"})
    c.request("launch", {"program": "/bin/true"})
    c.request("disconnect")
    return c.out


def bad_requests():
    """What a broken client sends: every error path the session answers."""
    c = Client()
    c.request("threads")  # before initialize
    c.raw(frame({"seq": 2, "type": "request", "command": "initialize", "arguments": {"pathFormat": "uri"}}))
    c.seq = 2
    c.request("initialize", {"adapterID": "strata"})
    c.request("initialize")
    c.request("stepBack", {"threadId": 1})
    c.request("launch", {"program": 42})
    c.request("launch", {"program": "/nonexistent/prog"})
    c.request("launch", {"program": "/bin/true", "cwd": "/nonexistent"})
    c.request("launch", {"program": "/bin/true", "console": "tty"})
    c.request("launch", {"module": "m", "program": "/bin/true"})
    c.request("launch", {"program": "/bin/true", "env": {"A=B": "1"}})
    c.request("launch", {"program": "/etc/hostname"})
    c.request("launch", {"program": "x.py", "python": [1]})
    c.request("attach", {"connect": {"port": 70000}})
    c.request("attach", {"connect": {"host": "10.0.0.1", "port": 5678}})
    c.request("attach", {"processId": -1})
    c.request("attach", {"listen": {"port": 1}, "connect": {"port": 2}})
    c.request("setBreakpoints", {"source": {"name": "no path"}, "breakpoints": [{"line": 1}]})
    c.request("setBreakpoints", {"source": {"path": "/a.c"}, "breakpoints": [{"line": "one"}]})
    c.request("setExceptionBreakpoints", {"filters": ["nonsense"]})
    c.request("next", {"threadId": 1, "granularity": "page"})
    c.request("variables", {"variablesReference": 1, "filter": "all"})
    c.request("readMemory", {"memoryReference": "0x0", "count": -1})
    c.request("writeMemory", {"memoryReference": "0x0", "data": "not base64!"})
    c.request("disassemble", {"memoryReference": "0x0", "instructionCount": -1})
    c.request("stackTrace", {"threadId": 1, "startFrame": -1})
    c.request("modules", {"startModule": 9007199254740993, "moduleCount": 9007199254740993})
    c.request("cancel", {"requestId": "x"})
    c.raw(frame({"seq": 40, "type": "request", "command": "threads"}))
    c.raw(frame({"seq": 40, "type": "request", "command": "threads"}))
    c.raw(frame({"seq": 41, "type": "request", "command": 7}))
    big = b'{"seq":42,"type":"request","command":"evaluate","arguments":{"expression":"x","n":1e400}}'
    c.raw(b"Content-Length: %d\r\n\r\n" % len(big) + big)
    c.raw(frame({"seq": 0, "type": "request", "command": "threads"}))
    c.raw(frame({"seq": 43.0, "type": "request", "command": "threads"}))
    c.raw(frame({"seq": 44, "type": "event", "event": "output"}))
    c.raw(frame({"seq": 45, "type": "response", "request_seq": 99, "success": True, "command": "runInTerminal"}))
    c.raw(frame({"seq": 46, "type": "nonsense"}))
    c.raw(frame([1, 2, 3]))
    c.raw(b"Content-Length: 9\r\n\r\n{\"seq\":47")
    c.raw(frame({"seq": 48, "type": "request", "command": "disconnect"}))
    return c.out


def gpu_trace():
    """A recorded GPU trace with no program: every GPU request, its launch frames, the console's commands."""
    c = Client()
    c.request("initialize", INIT)
    c.request("gpuSummary", {})  # before any data
    c.request("launch", {"trace": "/dev/null/bad.json"})  # not a file
    c.request("launch", {"trace": "/dev/null", "program": "/bin/true"})
    c.request("launch", {"trace": "/dev/null", "gpuStore": "/nonexistent/dir/s.strata"})
    c.request("launch", {"type": "strata", "request": "launch", "name": "Trace", "trace": "/dev/null"})
    c.request("setBreakpoints", {"source": {"path": "/src/train.py"}, "breakpoints": [{"line": 3}]})
    c.request("configurationDone")
    c.request("threads")
    c.request("gpuSummary", {"limit": 5})
    c.request("gpuSummary", {"limit": 0})
    c.request("gpuTimeline", {"maxItems": 2})
    c.request("gpuTimeline", {"startNs": 1500, "endNs": 1501, "maxItems": 100000})
    c.request("gpuTimeline", {"startNs": 9, "endNs": 3})
    c.request("gpuTimeline", {"startNs": -1, "maxItems": 100001})
    c.request("gpuKernel", {"id": 2})
    c.request("stackTrace", {"threadId": 1})
    c.request("scopes", {"frameId": 1})
    c.request("scopes", {"frameId": 2})
    c.request("evaluate", {"expression": "x", "frameId": 1, "context": "watch"})
    c.request("completions", {"text": "x", "column": 2, "frameId": 1})
    c.request("variables", {"variablesReference": 1})
    c.request("source", {"sourceReference": 1})
    c.request("gpuKernel", {"id": 99})
    c.request("gpuKernel", {"id": -3})
    c.request("gpuKernel", {})
    c.request("gpuExport", {"format": "chrome", "path": "/tmp/out.json"})
    c.request("gpuExport", {"format": "perfetto", "startNs": 1000, "endNs": 2000})
    c.request("gpuExport", {"format": "svg", "path": "relative.json"})
    c.request("gpuStart", {"mode": "stacks"})
    c.request("gpuStart", {"mode": "all"})
    c.request("gpuStop", {})
    for line in ["!help", "!gpu top 3", "!gpu kernel gemm", "!gpu timeline 1000 2000", "!gpu start", "!gpu stop",
                 "!sql SELECT name FROM kernels", "!nonsense", "!", "1 + 1"]:
        c.request("evaluate", {"expression": line, "context": "repl"})
    c.request("completions", {"text": "!gpu t", "column": 7})
    c.request("completions", {"text": "line one\n!s", "column": 3, "line": 2})
    c.request("completions", {"text": "", "column": 1})
    c.request("disconnect")
    return c.out


def gpu_beside_debugger():
    """A program debugged with the GPU backend beside it: '!' lines at a stop, GPU frames next to the debugger's."""
    c = Client()
    c.request("initialize", INIT)
    c.request("launch", {"program": "/bin/true", "stopOnEntry": True, "gpuStore": "/tmp/strata-fuzz-never.strata"})
    c.request("configurationDone")
    c.request("threads")
    c.request("stackTrace", {"threadId": 1})
    c.request("evaluate", {"expression": "!gpu top", "frameId": 1, "context": "repl"})
    c.request("evaluate", {"expression": "!gpu top", "frameId": 1, "context": "watch"})
    c.request("evaluate", {"expression": " !x", "frameId": 1, "context": "repl"})
    c.request("completions", {"text": "!g", "column": 3, "frameId": 1})
    c.request("gpuSummary", {})
    c.request("gpuKernel", {"id": 1})
    c.request("scopes", {"frameId": 1})
    c.request("continue", {"threadId": 1})
    c.request("scopes", {"frameId": 2})
    c.request("disconnect", {"terminateDebuggee": True})
    return c.out


def garbage_first():
    """A peer that does not speak DAP: the session closes without a word."""
    return frame("not an object") + frame({"seq": 1, "type": "request", "command": "initialize"})


def framing_error():
    """A framing error after initialize: an output event says why, then the connection closes."""
    c = Client()
    c.request("initialize", INIT)
    c.request("launch", {"program": "/bin/true", "stopOnEntry": True})
    c.raw(b"Content-Length: x\r\n\r\n{}")
    return c.out


SESSIONS = [native_debug, python_launch, terminal_launch, terminal_refused, cancel_launch, attach_native,
            attach_python, stale_ids, late_stack, huge_numbers, no_debuggee, bad_requests, gpu_trace,
            gpu_beside_debugger, garbage_first, framing_error]


def main():
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.dap"):
        old.unlink()
    for make in SESSIONS:
        (OUT / (make.__name__ + ".dap")).write_bytes(make())


if __name__ == "__main__":
    main()
