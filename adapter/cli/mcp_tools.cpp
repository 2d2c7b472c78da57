// The tools of `strata mcp`, with the JSON Schema of each one's arguments.
#include "adapter/cli/mcp_tools.hpp"

namespace strata::cli {

namespace {

#define SESSION_PROP R"("session": {"type": "string", "description": "The session's name; default: the only session"})"
#define WAIT_PROP                                                                                                   \
  R"("timeoutSeconds": {"type": "number", "minimum": 0, "maximum": 300, "default": 30,)"                           \
  R"( "description": "How long to wait for the program to stop or end before answering that it still runs"})"
#define THREAD_PROP R"("threadId": {"type": "integer", "description": "Default: the thread that stopped last"})"
#define FRAME_PROP R"("frame": {"type": "integer", "minimum": 0, "default": 0, "description": "Frame index in stack_trace, 0 the innermost"})"

const McpTool kTools[] = {
    {"start_debugging",
     "Start a program under the debugger: a Python script (.py) or a native executable (C/C++/CUDA). "
     "By default it stops before its first line so breakpoints can be set; answers with where it stopped, "
     "or that it exited. Also opens a GPU trace (torch.profiler/Kineto JSON, Nsight Systems SQLite) with `trace`.",
     R"({"type": "object", "properties": {
        "program": {"type": "string", "description": "The executable or .py script, relative to cwd"},
        "args": {"type": "array", "items": {"type": "string"}},
        "cwd": {"type": "string", "description": "Working directory; default: the server's"},
        "python": {"type": "string", "description": "Interpreter for a .py program; default: the newest found"},
        "native": {"type": "boolean", "description": "Also debug a Python program's C/C++ extensions: mixed mode"},
        "gpu": {"type": "string", "enum": ["trace", "stacks"], "description": "Collect the program's CUDA activity"},
        "trace": {"type": "string", "description": "Open this GPU trace instead of running a program"},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "breakpoints": {"type": "array", "items": {"type": "object", "properties": {
            "file": {"type": "string"}, "line": {"type": "integer", "minimum": 1}, "condition": {"type": "string"}},
            "required": ["file", "line"]}},
        "stopOnEntry": {"type": "boolean", "default": true},
        )" SESSION_PROP R"(, )" WAIT_PROP R"(}})"},
    {"attach",
     "Attach to a running process by pid (a Python program is read at once and then debugged with no restart; "
     "a native one is stopped). The process runs on when the session ends.",
     R"({"type": "object", "properties": {"pid": {"type": "integer", "minimum": 1},
        "native": {"type": "boolean", "description": "Also debug a Python program's C/C++: mixed mode"},
        )" SESSION_PROP R"(}, "required": ["pid"]})"},
    {"set_breakpoint", "Set a breakpoint at FILE:LINE, with an optional condition (an expression of the program's language).",
     R"({"type": "object", "properties": {"file": {"type": "string"}, "line": {"type": "integer", "minimum": 1},
        "condition": {"type": "string"}, )" SESSION_PROP R"(}, "required": ["file", "line"]})"},
    {"clear_breakpoints", "Remove breakpoints: all of them, those of a file, or the one at file:line.",
     R"({"type": "object", "properties": {"file": {"type": "string"}, "line": {"type": "integer", "minimum": 1},
        )" SESSION_PROP R"(}})"},
    {"resume",
     "Resume the stopped program: continue, or step (next: over calls; step_in: into them; step_out: to the caller). "
     "Answers at the next stop with its location, stack and locals, when the program ends, or after timeoutSeconds.",
     R"({"type": "object", "properties": {"action": {"type": "string", "enum": ["continue", "next", "step_in", "step_out"],
        "default": "continue"}, )" THREAD_PROP R"(, )" WAIT_PROP R"(, )" SESSION_PROP R"(}})"},
    {"pause", "Stop the running program where it is; answers with the stop.",
     R"({"type": "object", "properties": {)" WAIT_PROP R"(, )" SESSION_PROP R"(}})"},
    {"wait_for_stop", "Wait, without resuming, for the running program to stop (a breakpoint) or end.",
     R"({"type": "object", "properties": {)" WAIT_PROP R"(, )" SESSION_PROP R"(}})"},
    {"threads", "List the program's threads; the stopped one is marked.",
     R"({"type": "object", "properties": {)" SESSION_PROP R"(}})"},
    {"stack_trace", "The stack of a stopped thread, innermost frame first (Python and C/C++ frames merged).",
     R"({"type": "object", "properties": {)" THREAD_PROP R"(, "levels": {"type": "integer", "minimum": 1, "maximum": 1000,
        "default": 20}, )" SESSION_PROP R"(}})"},
    {"variables", "The local variables of a frame of the stopped thread.",
     R"({"type": "object", "properties": {)" FRAME_PROP R"(, )" THREAD_PROP R"(, )" SESSION_PROP R"(}})"},
    {"evaluate", "Evaluate an expression in a frame of the stopped program (or globally while it runs).",
     R"({"type": "object", "properties": {"expression": {"type": "string"}, )" FRAME_PROP R"(, )" THREAD_PROP R"(,
        )" SESSION_PROP R"(}, "required": ["expression"]})"},
    {"gpu_summary", "The session's GPU activity so far: top kernels by total time, copies, syncs, devices.",
     R"({"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
        )" SESSION_PROP R"(}})"},
    {"gpu_kernel", "One GPU record in full (a kernel's launch configuration, timing, and the Python/C++ lines that launched it).",
     R"({"type": "object", "properties": {"id": {"type": "integer", "minimum": 1, "description": "A record id from gpu_summary"},
        )" SESSION_PROP R"(}, "required": ["id"]})"},
    {"debug_console", "A Debug Console command of the session: `!gpu ...` or `!sql SELECT ...` on its GPU data.",
     R"({"type": "object", "properties": {"command": {"type": "string"}, )" SESSION_PROP R"(}, "required": ["command"]})"},
    {"parallel_stacks",
     "Every thread's stack of running processes (the ranks of a training job), read from outside without stopping them, "
     "merged into one tree: where each rank is, and which ones differ. Default: the session's program and its children.",
     R"({"type": "object", "properties": {"pids": {"type": "array", "items": {"type": "integer", "minimum": 1}},
        "processTree": {"type": "integer", "minimum": 1, "description": "A launcher's pid: it and every descendant"},
        "pythonOnly": {"type": "boolean", "default": false}, )" SESSION_PROP R"(}})"},
    {"list_sessions", "The debug sessions this server holds, with their state.", R"({"type": "object", "properties": {}})"},
    {"end_session", "End a session: a started program is ended, an attached one runs on.",
     R"({"type": "object", "properties": {)" SESSION_PROP R"(}})"},
};

}  // namespace

std::span<const McpTool> mcpTools() { return kTools; }

}  // namespace strata::cli
