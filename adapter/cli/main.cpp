// strata: the command-line client for terminals and AI agents. It drives strata-dap
// over DAP like any IDE would, and prints what a user needs to see.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "adapter/cli/attach.hpp"
#include "adapter/cli/child_runs.hpp"
#include "adapter/cli/dap_client.hpp"
#include "adapter/cli/gpu.hpp"
#include "adapter/cli/mcp.hpp"
#include "adapter/cli/session_cmd.hpp"
#include "adapter/cli/stacks.hpp"
#include "adapter/cli/stops.hpp"
#include "strata/protocol/types.hpp"

namespace {

using namespace strata;
namespace json = boost::json;
namespace asio = boost::asio;

const char* kUsage = R"(strata — command-line client of the Strata debugger

usage: strata run [options] -- PROGRAM [ARGS...]
       strata run [options] -- python SCRIPT.py [ARGS...]
  Runs PROGRAM (an executable, or a .py script under Python 3.10+) through the Strata debug
  adapter and prints its output; exits with the program's exit code. A crash (a fatal signal)
  prints a crash report first: where, the frames, the locals, the other threads.

options:
  --break FILE:LINE[:CONDITION]
                       stop there (Python or native ELF), print the thread, the reason, the top
                       frames and the locals, then continue (repeatable)
  --core-on-crash DIR  at a crash, write the program's core into DIR (core.PID) for strata core
  --no-debug           run the program without the debugger (by default a crash stops it long
                       enough to print the crash report: the signal, where, the crashing
                       thread's frames and locals, the other threads' top frames)
  --json               print JSON lines ({"type": "output"|"stopped"|"exited"|"error", ...})
  --cwd DIR            working directory of the program (default: the current directory)
  --python PATH        interpreter for a .py program (default: newest Python >= 3.12 found)
  --env NAME=VALUE     set a variable for the program (repeatable)
  --native             with a .py program: debug its C/C++ extensions too, in the same session
                       (mixed mode: --break takes .py and C/C++ files alike)
  --gpu MODE           collect its GPU activity (trace or stacks) into --gpu-store FILE (or a
                       temporary file the output names); the summary is printed at the end
  --gpu-store FILE     where the GPU data goes (a new file, kept)
  --connect HOST:PORT  use an adapter that listens (strata-dap --listen) instead of starting one
  --token TOKEN        token for --connect when the adapter requires one
  --adapter PATH       the strata-dap to start (default: the one installed beside strata)
  --version, --help

usage: strata stacks [--json] [--native|--python-only] [--full] [--locals] [--children]
                     [--max-frames N] [--python-layout 3.N] PID
  Attaches to process PID, prints every thread's stack and detaches; the process runs on
  untouched (one stopped by a signal stays stopped). In a CPython process (3.10-3.13) the
  Python frames, read from its memory, are spliced among the native ones, interpreter frames
  folded (--full shows them), each thread marked with the GIL and what it waits on.
  --native: native frames only; --python-only: Python frames only; --locals: the simple
  locals of each Python frame; --children: the process's descendants too; --max-frames: per
  thread (default 200); --python-layout: read with another version's layout (for testing:
  the checks reject one that does not fit). --json prints one JSON object.

usage: strata core [--json] [--native|--python-only] [--full] [--locals] [--max-frames N]
                   [--sysroot DIR] CORE [PROGRAM]
       strata core --dump [--json] PID [FILE]
  Reads a core file (the kernel's, or gcore's) as strata stacks reads a live process: why the
  process ended, and every thread's stack from its saved registers, native frames with their
  lines and, in a CPython process (3.10-3.14), the Python frames read from the core's memory,
  spliced in. Pages a core leaves out (code, read-only data) are read from the files its notes
  name (--sysroot DIR: a container's or another machine's root; PROGRAM: the executable, when
  it has moved); a file missing or changed since is said. --json prints one JSON object.
  strata core --dump PID [FILE]: writes the core of a running process (default FILE core.PID)
  without ending it: every thread is held only while its memory is copied, then runs on.

usage: strata attach [--json] [--native] [--break FILE:LINE[:CONDITION]]... [--connect HOST:PORT] PID
  Attaches to process PID and prints a snapshot: the stopped thread, its top frames and the
  locals of its innermost Python frame (a CPython process is read from its memory at once,
  the program running on). With --break, waits until the Strata agent is in (3.12, 3.13),
  prints the first stop there, and detaches: the program runs on as if never touched.
  --native (a Python program): its C/C++ extensions too (mixed mode): --break in a .cpp file.

usage: strata session start [options] -- PROGRAM [ARGS...]   (or --attach PID, --trace FILE)
       strata break|clear|continue|next|step|out|pause|wait|threads|stack|locals|eval ... [--session N] [--json]
       strata session list|end
  A debug session kept in the background between short commands, for terminals and agents:
  each command answers when the program has stopped, ended, or its --timeout passed
  (strata session --help says more).

usage: strata mcp [--http HOST:PORT]
  A Model Context Protocol server for AI agents (stdio by default): tools to start and attach
  debug sessions, set breakpoints, resume and step, read stacks, variables and GPU data, and the
  stacks of a running job (strata mcp --help).

usage: strata gpu run [--trace|--stacks] [--store FILE] [--profile NAME[:N]] -- PROGRAM [ARGS...]
       strata gpu top|kernel|timeline|sql|export ... FILE
  Runs a program with GPU (CUDA) collection into a store file, or queries a store or a
  torch.profiler / Nsight Systems trace (strata gpu --help says more).
)";

struct RunOptions {
  bool json = false;
  bool noDebug = false;  // run it plainly: no crash report
  std::string coreOnCrash;  // a folder for the program's core at a crash
  bool native = false;  // mixed mode
  std::string cwd, python, connect, token, adapter, gpu, gpuStore;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> command;
  std::vector<cli::BreakSpec> breaks;
};

class Printer {
 public:
  explicit Printer(bool json) : json_(json) {}
  void output(const std::string& category, const std::string& text) {
    if (json_) return line({{"type", "output"}, {"category", category}, {"text", text}});
    std::FILE* f = category == "stdout" ? stdout : stderr;
    std::fwrite(text.data(), 1, text.size(), f);
    if (f == stdout && category != "stdout") std::fflush(stdout);
  }
  void exited(std::int64_t code) {
    if (json_) return line({{"type", "exited"}, {"exitCode", code}});
    std::fflush(stdout);
  }
  void error(const std::string& message) {
    if (json_) return line({{"type", "error"}, {"message", message}});
    std::fflush(stdout);
    std::fprintf(stderr, "strata: %s\n", message.c_str());
  }

 private:
  void line(json::object o) {
    std::string s = json::serialize(o);
    s += '\n';
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  }
  bool json_;
};

int run(const RunOptions& o) {
  asio::io_context io(1);
  cli::DapClient client(io);
  Printer print(o.json);
  auto started = o.connect.empty() ? client.spawn(o.adapter.empty() ? cli::siblingAdapter() : o.adapter)
                                   : client.connect(o.connect, o.token);
  if (!started) {
    print.error(started.error().message);
    return 1;
  }
  std::optional<std::int64_t> exitCode;
  // Breakpoints (and the child processes' sessions they need); without them the program still
  // runs under the debugger, which stops only at a crash to print what happened there.
  const bool debugging = !o.breaks.empty();
  const bool debugRun = debugging || !o.noDebug;
  // The program's child processes (a DataLoader's workers, a Pool's): sessions of their own,
  // with the same breakpoints.
  cli::ChildRuns children(io, {o.adapter.empty() ? cli::siblingAdapter() : o.adapter, o.breaks, o.json,
                               [&print](const std::string& category, const std::string& text) { print.output(category, text); }});
  if (debugging) children.serve(client);
  int result = 1;
  bool disconnecting = false;
  auto disconnect = [&](bool terminate) {
    if (disconnecting) return;
    disconnecting = true;
    client.request("disconnect", json::object{{"terminateDebuggee", terminate}},
                   [&](const protocol::Response&) { client.close(); });
  };
  client.onClosed([&] {
    if (!disconnecting) print.error("the debug adapter closed the connection unexpectedly");
    io.stop();
  });
  client.onEvent([&](const protocol::Event& e) {
    const auto* body = e.body.if_object();
    if (e.event == "output" && body) {
      auto cat = body->if_contains("category");
      auto out = body->if_contains("output");
      print.output(cat && cat->is_string() ? std::string(cat->get_string()) : "console",
                   out && out->is_string() ? std::string(out->get_string()) : "");
    } else if (e.event == "exited" && body) {
      if (auto c = body->if_contains("exitCode"); c && c->is_int64()) exitCode = c->get_int64();
      print.exited(exitCode.value_or(0));
    } else if (e.event == "terminated") {
      result = exitCode ? static_cast<int>(*exitCode & 0xff) : 0;
      if (o.gpu.empty()) return disconnect(false);
      // What the GPU did, from the session's store (the program's last records are in).
      client.request("evaluate", json::object{{"expression", "!gpu top 10"}, {"context", "repl"}},
                     [&](const protocol::Response& r) {
                       const auto* b = r.body.if_object();
                       const auto* text = b ? b->if_contains("result") : nullptr;
                       if (r.success && text && text->is_string())
                         print.output("console", std::string(text->get_string()) + "\n");
                       disconnect(false);
                     });
    } else if (e.event == "initialized") {
      // Configuration, as DAP has it: once the adapter says it is ready (after launch).
      auto done = [&client] { client.request("configurationDone", nullptr, [](const protocol::Response&) {}); };
      if (!debugging) return done();
      cli::setBreakpoints(client, o.breaks, [&](const std::string& problem) { print.error(problem); }, done);
    } else if (e.event == "stopped" && body) {
      cli::reportStopAndContinue(client, *body, o.json);
    }
  });

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) disconnect(true);
  });

  json::object init{{"clientID", "strata-cli"}, {"clientName", "strata"}, {"adapterID", "strata"},
                    {"linesStartAt1", true}, {"columnsStartAt1", true}, {"pathFormat", "path"},
                    {"supportsRunInTerminalRequest", false}, {"supportsStartDebuggingRequest", debugging}};
  client.request("initialize", init, [&](const protocol::Response& r) {
    if (!r.success) {
      print.error("initialize failed: " + r.message.value_or("?"));
      return disconnect(true);
    }
    // `-- python x.py args`: the interpreter named first, the script after it.
    std::size_t first = 0;
    std::string python = o.python;
    std::string name = std::filesystem::path(o.command.front()).filename().string();
    if (o.command.size() >= 2 && name.rfind("python", 0) == 0 &&
        name.find_first_not_of("0123456789.", 6) == std::string::npos) {
      python = o.command.front();
      first = 1;
    }
    json::object launch{{"noDebug", !debugRun}, {"program", o.command[first]}};
    // Child processes get sessions of their own only for breakpoints; else they run free.
    if (debugRun && !debugging) launch["subProcess"] = false;
    json::array args;
    for (std::size_t i = first + 1; i < o.command.size(); ++i) args.emplace_back(o.command[i]);
    launch["args"] = std::move(args);
    std::error_code ec;
    launch["cwd"] = o.cwd.empty() ? std::filesystem::current_path(ec).string() : o.cwd;
    if (!python.empty()) launch["python"] = python;
    if (o.native) launch["native"] = true;
    if (!o.gpu.empty()) launch["gpu"] = o.gpu;
    if (!o.gpuStore.empty()) launch["gpuStore"] = o.gpuStore;
    if (!o.coreOnCrash.empty()) launch["coreOnCrash"] = o.coreOnCrash;
    if (!o.env.empty()) {
      json::object env;
      for (const auto& [k, v] : o.env) env[k] = v;
      launch["env"] = std::move(env);
    }
    client.request("launch", launch, [&](const protocol::Response& r) {
      if (!r.success) {
        print.error(r.message.value_or("launch failed"));
        result = 1;
        return disconnect(true);
      }
    });
  });
  io.run();
  return result;
}

int usageError(const std::string& message) {
  std::fprintf(stderr, "strata: %s\n(see strata --help)\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) return usageError("missing command");
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("strata %s\n", STRATA_VERSION);
    return 0;
  }
  if (cmd == "stacks") return strata::cli::stacksCommand(argc, argv, 2);
  if (cmd == "core") return strata::cli::coreCommand(argc, argv, 2);
  if (cmd == "attach") return strata::cli::attachCommand(argc, argv, 2);
  if (cmd == "gpu") {
    // `strata gpu top` with no file: the GPU data of the running session (the Debug Console's !gpu).
    std::string sub = argc > 2 ? argv[2] : "";
    bool store = sub == "run" || sub == "--help" || sub == "-h" || sub.empty();
    std::error_code ec;
    // A FILE argument (a store or a trace, there or misspelt) makes it the store command.
    for (int k = 3; k < argc && !store; ++k)
      store = std::filesystem::is_regular_file(argv[k], ec) || std::strpbrk(argv[k], "./") != nullptr;
    // With no session running, it is the store command, which says what it needs.
    bool named = false;
    for (int k = 3; k < argc; ++k) named |= std::strcmp(argv[k], "--session") == 0;
    if (!store && (named || strata::cli::sessionsRunning())) return strata::cli::sessionConsole("!gpu", argc, argv, 2);
    return strata::cli::gpuCommand(argc, argv, 2);
  }
  if (cmd == "session") return strata::cli::sessionCommand(argc, argv, 2);
  if (cmd == "mcp") return strata::cli::mcpCommand(argc, argv, 2);
  if (strata::cli::isSessionVerb(cmd)) return strata::cli::sessionVerb(cmd, argc, argv, 2);
  if (cmd != "run") return usageError("unknown command '" + cmd + "'");
  RunOptions o;
  std::vector<std::string> breakTexts;
  int i = 2;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto need = [&](const char* what) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)what;
      return argv[++i];
    };
    if (a == "--") { ++i; break; }
    if (a == "--json") o.json = true;
    else if (a == "--break") {
      auto v = need("--break");
      if (!v) return usageError("--break needs FILE:LINE[:CONDITION]");
      breakTexts.emplace_back(v);
    }
    else if (a == "--cwd") { auto v = need("--cwd"); if (!v) return usageError("--cwd needs a directory"); o.cwd = v; }
    else if (a == "--python") { auto v = need("--python"); if (!v) return usageError("--python needs a path"); o.python = v; }
    else if (a == "--connect") { auto v = need("--connect"); if (!v) return usageError("--connect needs HOST:PORT"); o.connect = v; }
    else if (a == "--native") o.native = true;
    else if (a == "--no-debug") o.noDebug = true;
    else if (a == "--core-on-crash") { auto v = need("--core-on-crash"); if (!v) return usageError("--core-on-crash needs a folder"); o.coreOnCrash = v; }
    else if (a == "--gpu") { auto v = need("--gpu"); if (!v) return usageError("--gpu needs trace or stacks"); o.gpu = v; }
    else if (a == "--gpu-store") { auto v = need("--gpu-store"); if (!v) return usageError("--gpu-store needs a FILE"); o.gpuStore = v; }
    else if (a == "--token") { auto v = need("--token"); if (!v) return usageError("--token needs a value"); o.token = v; }
    else if (a == "--adapter") { auto v = need("--adapter"); if (!v) return usageError("--adapter needs a path"); o.adapter = v; }
    else if (a == "--env") {
      auto v = need("--env");
      const char* eq = v ? std::strchr(v, '=') : nullptr;
      if (!eq || eq == v) return usageError("--env needs NAME=VALUE");
      o.env.emplace_back(std::string(v, eq), std::string(eq + 1));
    } else if (!a.empty() && a[0] == '-') return usageError("unknown option '" + a + "'");
    else break;  // the program itself, without "--"
  }
  for (; i < argc; ++i) o.command.emplace_back(argv[i]);
  // Relative breakpoint files are taken from --cwd wherever it appears on the line.
  std::error_code ec;
  std::string base = std::filesystem::absolute(o.cwd.empty() ? "." : o.cwd, ec).string();
  for (const auto& text : breakTexts) {
    auto b = cli::parseBreak(text, base);
    if (!b) return usageError(b.error().message);
    o.breaks.push_back(*b);
  }
  if (o.command.empty()) return usageError("run needs a program: strata run -- PROGRAM [ARGS...]");
  if (o.noDebug && !o.breaks.empty()) return usageError("--no-debug runs the program without a debugger: it takes no --break");
  if (o.noDebug && !o.coreOnCrash.empty()) return usageError("--core-on-crash needs the debugger: it cannot go with --no-debug");
  if (o.noDebug && o.native) return usageError("--native debugs a Python program's C/C++ too: it cannot go with --no-debug");
  return run(o);
}
