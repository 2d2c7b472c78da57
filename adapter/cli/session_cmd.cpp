// Persistent sessions for terminals and agents: the commands that start, list and end them, and
// the short commands that talk to a session's background process (session_host.cpp).
#include "adapter/cli/session_cmd.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include <boost/json.hpp>

#include "adapter/cli/json_fields.hpp"
#include "adapter/cli/session_core.hpp"
#include "adapter/cli/session_host.hpp"

namespace strata::cli {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {


const char* kSessionUsage = R"(usage: strata session start [--name N] [--json] [--timeout S] [--run] [--native]
                            [--python PATH] [--cwd DIR] [--env NAME=VALUE]... [--gpu MODE]
                            [--break FILE:LINE[:CONDITION]]... [--adapter PATH] -- PROGRAM [ARGS...]
       strata session start [--name N] [--json] [--native] --attach PID
       strata session start [--name N] [--json] --trace FILE
       strata session list [--json]
       strata session end [--session N | --all] [--json]
  start: starts PROGRAM under the debugger in the background (stopped before its first line
  unless --run) and answers with where it stopped; the program's output is kept and shown with
  the next answers. Then, one short command at a time (each with [--session N] [--json]):
    strata break FILE:LINE[:CONDITION]        strata clear [FILE[:LINE]]
    strata continue|next|step|out [--thread T] [--timeout S]
    strata pause|wait [--timeout S]           strata threads
    strata stack [--thread T] [--levels N]    strata locals [--frame N] [--thread T]
    strata eval [--frame N] [--thread T] EXPRESSION
    strata gpu [top|kernel ID|timeline|...]   (the Debug Console's !gpu, on the session's data)
    strata stacks                             (every thread of the session's program, read from outside)
  A command that resumes the program answers at the next stop, when the program ends, or after
  --timeout seconds (default 30). --session: the session's name (default: the only one running,
  or $STRATA_SESSION).
)";

using namespace fields;

int usageError(const std::string& message) {
  std::fprintf(stderr, "strata: %s\n(see strata session --help)\n", message.c_str());
  return 2;
}

bool validName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return name[0] != '.';
}

// The session a command is for: --session, $STRATA_SESSION, or the only one.
Result<std::string> pickSession(const fs::path& dir, std::string name) {
  if (name.empty())
    if (const char* env = std::getenv("STRATA_SESSION"); env && *env) name = env;
  auto live = liveSessions(dir);
  if (!name.empty()) {
    if (std::find(live.begin(), live.end(), name) == live.end())
      return Error{errors::kBadCommandLine,
                   "no session named " + name + (live.empty() ? std::string(": start one with `strata session start --name " + name + " -- PROGRAM`")
                                                             : " (running: " + [&] {
                                                                 std::string s;
                                                                 for (const auto& n : live) s += (s.empty() ? "" : ", ") + n;
                                                                 return s;
                                                               }() + ")"),
                   true};
    return name;
  }
  if (live.empty())
    return Error{errors::kBadCommandLine, "no session: start one with `strata session start -- PROGRAM`", true};
  if (live.size() > 1) {
    std::string s;
    for (const auto& n : live) s += (s.empty() ? "" : ", ") + n;
    return Error{errors::kBadCommandLine, "several sessions (" + s + "): name one with --session NAME", true};
  }
  return live[0];
}

// --- the wire: one JSON line each way ---------------------------------------------------------

Result<json::object> call(const fs::path& dir, const std::string& name, json::object request, std::int64_t waitMs) {
  SessionFiles f = filesOf(dir, name);
  request["token"] = readFile(f.token);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoError(errors::kSystemCallFailed, "socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = f.socket.string();
  if (path.size() >= sizeof addr.sun_path) {
    ::close(fd);
    return Error{errors::kSystemCallFailed, "the session socket's path is too long: " + path, true};
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    return Error{errors::kSystemCallFailed,
                 "session " + name + " does not answer (" + std::strerror(err) + "): `strata session end --session " + name +
                     "` clears it",
                 true};
  }
  // The host answers when the command is done: a resume waits up to its own timeout.
  timeval tv{static_cast<time_t>(waitMs / 1000 + 30), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string line = json::serialize(request) + "\n";
  for (std::size_t sent = 0; sent < line.size();) {
    ssize_t n = ::write(fd, line.data() + sent, line.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return errnoError(errors::kSystemCallFailed, "write to session " + name);
    }
    sent += static_cast<std::size_t>(n);
  }
  std::string reply;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Error{errors::kSystemCallFailed, "session " + name + " did not answer: " + std::strerror(err), true};
    }
    if (n == 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::error_code ec;
  auto parsed = json::parse(reply, ec);
  if (ec || !parsed.is_object())
    return Error{errors::kSystemCallFailed, "session " + name + " closed the connection without an answer", true};
  return parsed.get_object();
}

int printAnswer(const json::object& reply, bool asJson) {
  bool ok = reply.contains("ok") && reply.at("ok").is_bool() && reply.at("ok").get_bool();
  if (asJson) {
    std::printf("%s\n", json::serialize(reply).c_str());
  } else {
    std::string text = str(reply, "text");
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::fputs(text.c_str(), ok ? stdout : stderr);
  }
  return ok ? 0 : 1;
}

// --- the commands -------------------------------------------------------------------------------

struct Common {
  std::string session;
  bool json = false;
  std::int64_t timeoutMs = kDefaultTimeoutMs;
  std::int64_t thread = 0, frame = 0, levels = 20;
  std::vector<std::string> rest;
};

// The options every short command takes; `rest` keeps the others in order.
Result<Common> parseCommon(int argc, char** argv, int first) {
  Common c;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= argc) return Error{errors::kBadCommandLine, a + " needs a value", true};
      return std::string(argv[++i]);
    };
    auto number = [&](std::int64_t& out, std::int64_t scale) -> Result<void> {
      auto v = value();
      if (!v) return v.takeError();
      char* end = nullptr;
      double d = std::strtod(v->c_str(), &end);
      if (!end || *end || d < 0) return Error{errors::kBadCommandLine, a + " needs a number, got '" + *v + "'", true};
      out = static_cast<std::int64_t>(d * static_cast<double>(scale));
      return {};
    };
    Result<void> ok;
    if (a == "--session") {
      auto v = value();
      if (!v) return v.takeError();
      c.session = *v;
    } else if (a == "--json") c.json = true;
    else if (a == "--timeout") ok = number(c.timeoutMs, 1000);
    else if (a == "--thread") ok = number(c.thread, 1);
    else if (a == "--frame") ok = number(c.frame, 1);
    else if (a == "--levels") ok = number(c.levels, 1);
    else if (a == "--") {
      for (++i; i < argc; ++i) c.rest.emplace_back(argv[i]);
    } else c.rest.push_back(a);
    if (!ok) return ok.takeError();
  }
  return c;
}

int sendAndPrint(const Common& c, const std::string& command, json::object args) {
  auto dir = sessionsDir();
  if (!dir) return usageError(dir.error().message);
  auto name = pickSession(*dir, c.session);
  if (!name) {
    std::fprintf(stderr, "strata: %s\n", name.error().message.c_str());
    return 1;
  }
  args["timeoutMs"] = c.timeoutMs;
  auto reply = call(*dir, *name, json::object{{"command", command}, {"args", std::move(args)}}, c.timeoutMs);
  if (!reply) {
    std::fprintf(stderr, "strata: %s\n", reply.error().message.c_str());
    return 1;
  }
  return printAnswer(*reply, c.json);
}

int startCommand(int argc, char** argv, int first) {
  SessionStart spec;
  std::string name;
  bool asJson = false;
  std::int64_t timeoutMs = kDefaultTimeoutMs;
  std::vector<std::string> breakTexts;
  int i = first;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto need = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--") { ++i; break; }
    const char* v = nullptr;
    if (a == "--json") asJson = true;
    else if (a == "--run") spec.stopOnEntry = false;
    else if (a == "--native") spec.native = true;
    else if (a == "--name") { if (!(v = need())) return usageError("--name needs a name"); name = v; }
    else if (a == "--timeout") {
      if (!(v = need())) return usageError("--timeout needs seconds");
      timeoutMs = static_cast<std::int64_t>(std::strtod(v, nullptr) * 1000);
      if (timeoutMs <= 0) return usageError("--timeout needs a number of seconds, got '" + std::string(v) + "'");
    }
    else if (a == "--python") { if (!(v = need())) return usageError("--python needs a path"); spec.python = v; }
    else if (a == "--cwd") { if (!(v = need())) return usageError("--cwd needs a folder"); spec.cwd = v; }
    else if (a == "--gpu") { if (!(v = need())) return usageError("--gpu needs trace or stacks"); spec.gpu = v; }
    else if (a == "--trace") { if (!(v = need())) return usageError("--trace needs a file"); spec.trace = v; }
    else if (a == "--adapter") { if (!(v = need())) return usageError("--adapter needs a path"); spec.adapter = v; }
    else if (a == "--break") { if (!(v = need())) return usageError("--break needs FILE:LINE[:CONDITION]"); breakTexts.emplace_back(v); }
    else if (a == "--attach") {
      if (!(v = need())) return usageError("--attach needs a process id");
      spec.attachPid = std::strtoll(v, nullptr, 10);
      if (spec.attachPid <= 0) return usageError("--attach needs a process id, got '" + std::string(v) + "'");
    } else if (a == "--core") {
      return usageError("core files are not debugged yet: use gdb for a core file until strata core lands");
    } else if (a == "--env") {
      v = need();
      const char* eq = v ? std::strchr(v, '=') : nullptr;
      if (!eq || eq == v) return usageError("--env needs NAME=VALUE");
      spec.env.emplace_back(std::string(v, eq), std::string(eq + 1));
    } else if (!a.empty() && a[0] == '-') return usageError("unknown option '" + a + "'");
    else break;
  }
  for (; i < argc; ++i) spec.command.emplace_back(argv[i]);
  if (int given = !spec.command.empty() + (spec.attachPid != 0) + !spec.trace.empty(); given != 1)
    return usageError(given ? "session start takes one of a program, --attach PID and --trace FILE"
                            : "session start needs a program (strata session start -- PROGRAM [ARGS...]), --attach PID or --trace FILE");
  std::error_code ec;
  std::string base = fs::absolute(spec.cwd.empty() ? "." : spec.cwd, ec).string();
  for (const auto& text : breakTexts) {
    auto b = parseBreak(text, base);
    if (!b) return usageError(b.error().message);
    spec.breaks.push_back(*b);
  }
  if (!spec.cwd.empty()) spec.cwd = base;
  if (!spec.trace.empty()) spec.trace = fs::absolute(spec.trace, ec).string();
  // The adapter beside this strata, found before the host leaves this process's view of it.
  if (spec.adapter.empty()) spec.adapter = siblingAdapter();

  auto dir = sessionsDir();
  if (!dir) return usageError(dir.error().message);
  auto live = liveSessions(*dir);
  if (name.empty()) {
    // The program's name, or the pid's; -2, -3... when taken.
    std::string stem = spec.attachPid        ? "pid" + std::to_string(spec.attachPid)
                       : !spec.trace.empty() ? fs::path(spec.trace).stem().string()
                                      : fs::path(spec.command.size() > 1 && fs::path(spec.command[0]).filename().string().rfind("python", 0) == 0
                                                     ? spec.command[1] : spec.command[0]).stem().string();
    std::string clean;
    for (char c : stem) clean += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
    if (clean.empty() || clean[0] == '.') clean = "session";
    name = clean;
    for (int n = 2; std::find(live.begin(), live.end(), name) != live.end(); ++n) name = clean + "-" + std::to_string(n);
  } else if (!validName(name)) {
    return usageError("--name takes letters, digits, '-', '_' and '.', got '" + name + "'");
  } else if (std::find(live.begin(), live.end(), name) != live.end()) {
    std::fprintf(stderr, "strata: a session named %s is running: end it (strata session end --session %s) or pick another --name\n",
                 name.c_str(), name.c_str());
    return 1;
  }
  SessionFiles files = filesOf(*dir, name);

  int answer[2];
  if (::pipe2(answer, O_CLOEXEC) != 0) return usageError(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return usageError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(answer[0]);
    // A grandchild: the host is nobody's child the shell waits for.
    pid_t host = ::fork();
    if (host != 0) ::_exit(host < 0 ? 1 : 0);
    runHost(name, files, spec, Millis(timeoutMs), answer[1]);
  }
  ::close(answer[1]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(answer[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(answer[0]);
  std::error_code jec;
  auto parsed = json::parse(text, jec);
  if (jec || !parsed.is_object()) {
    std::fprintf(stderr, "strata: the session's background process ended without an answer (see %s)\n", files.log.c_str());
    return 1;
  }
  return printAnswer(parsed.get_object(), asJson);
}

int listCommand(int argc, char** argv, int first) {
  auto c = parseCommon(argc, argv, first);
  if (!c) return usageError(c.error().message);
  auto dir = sessionsDir();
  if (!dir) return usageError(dir.error().message);
  json::array all;
  std::string text;
  for (const auto& name : liveSessions(*dir)) {
    auto reply = call(*dir, name, json::object{{"command", "status"}}, 1000);
    if (!reply) {
      all.push_back(json::object{{"session", name}, {"error", reply.error().message}});
      text += name + ": " + reply.error().message + "\n";
      continue;
    }
    text += str(*reply, "text") + "\n";
    reply->erase("token");
    reply->erase("text");
    reply->erase("ok");
    all.push_back(std::move(*reply));
  }
  if (c->json) std::printf("%s\n", json::serialize(json::object{{"sessions", all}}).c_str());
  else std::fputs(text.empty() ? "no sessions (strata session start -- PROGRAM starts one)\n" : text.c_str(), stdout);
  return 0;
}

int endCommand(int argc, char** argv, int first) {
  bool all = false;
  std::vector<char*> args(argv, argv + argc);
  std::erase_if(args, [&](char* a) { return std::strcmp(a, "--all") == 0 && (all = true); });
  auto c = parseCommon(static_cast<int>(args.size()), args.data(), first);
  if (!c) return usageError(c.error().message);
  if (!c->rest.empty()) return usageError("unexpected argument '" + c->rest[0] + "'");
  if (!all) return sendAndPrint(*c, "end", {});
  auto dir = sessionsDir();
  if (!dir) return usageError(dir.error().message);
  int rc = 0;
  for (const auto& name : liveSessions(*dir)) {
    Common one = *c;
    one.session = name;
    rc |= sendAndPrint(one, "end", {});
  }
  return rc;
}

}  // namespace

int sessionCommand(int argc, char** argv, int first) {
  if (first >= argc || std::strcmp(argv[first], "--help") == 0 || std::strcmp(argv[first], "-h") == 0) {
    std::fputs(kSessionUsage, first >= argc ? stderr : stdout);
    return first >= argc ? 2 : 0;
  }
  std::string sub = argv[first];
  if (sub == "start") return startCommand(argc, argv, first + 1);
  if (sub == "list") return listCommand(argc, argv, first + 1);
  if (sub == "end") return endCommand(argc, argv, first + 1);
  return usageError("unknown session command '" + sub + "' (start, list or end)");
}

bool isSessionVerb(std::string_view c) {
  for (const char* v : {"break", "clear", "continue", "next", "step", "out", "pause", "wait", "threads", "stack",
                        "locals", "eval"})
    if (c == v) return true;
  return false;
}

int sessionVerb(std::string_view command, int argc, char** argv, int first) {
  auto c = parseCommon(argc, argv, first);
  if (!c) return usageError(c.error().message);
  json::object args;
  auto noMore = [&]() { return c->rest.empty() ? 0 : usageError("unexpected argument '" + c->rest[0] + "'"); };
  std::string cmd(command);
  if (command == "break") {
    if (c->rest.size() != 1) return usageError("break needs FILE:LINE[:CONDITION]");
    std::error_code ec;
    auto b = parseBreak(c->rest[0], fs::current_path(ec).string());
    if (!b) return usageError(b.error().message);
    args = {{"file", b->file}, {"line", b->line}};
    if (b->condition) args["condition"] = *b->condition;
  } else if (command == "clear") {
    if (c->rest.size() > 1) return usageError("clear takes FILE[:LINE], or nothing for every breakpoint");
    if (!c->rest.empty()) {
      std::string spec = c->rest[0];
      auto colon = spec.rfind(':');
      std::int64_t line = 0;
      if (colon != std::string::npos && colon + 1 < spec.size() &&
          spec.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
        line = std::stoll(spec.substr(colon + 1));
        spec.resize(colon);
      }
      std::error_code ec;
      args = {{"file", fs::absolute(spec, ec).lexically_normal().string()}, {"line", line}};
    }
  } else if (command == "eval") {
    if (c->rest.empty()) return usageError("eval needs an expression");
    std::string expression;
    for (const auto& r : c->rest) expression += (expression.empty() ? "" : " ") + r;
    args = {{"expression", expression}, {"thread", c->thread}, {"frame", c->frame}};
  } else {
    if (int rc = noMore()) return rc;
    args = {{"thread", c->thread}, {"frame", c->frame}, {"levels", c->levels}};
  }
  return sendAndPrint(*c, cmd, std::move(args));
}

bool sessionsRunning() {
  auto dir = sessionsDir();
  return dir && !liveSessions(*dir).empty();
}

int sessionConsole(const std::string& text, int argc, char** argv, int first) {
  auto c = parseCommon(argc, argv, first);
  if (!c) return usageError(c.error().message);
  std::string line = text;
  for (const auto& r : c->rest) line += " " + r;
  return sendAndPrint(*c, "console", json::object{{"text", line}});
}

std::int64_t sessionProgramPid(const std::string& name, std::string& problem) {
  auto dir = sessionsDir();
  if (!dir) return problem = dir.error().message, 0;
  auto picked = pickSession(*dir, name);
  if (!picked) return problem = picked.error().message, 0;
  auto reply = call(*dir, *picked, json::object{{"command", "status"}}, 1000);
  if (!reply) return problem = reply.error().message, 0;
  if (std::int64_t pid = num(*reply, "pid")) return pid;
  problem = "session " + *picked + " has no process yet";
  return 0;
}

}  // namespace strata::cli
