// The background process of a `strata session`, and the folder where sessions live.
#include "adapter/cli/session_host.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>

#include "adapter/cli/json_fields.hpp"

namespace strata::cli {

namespace fs = std::filesystem;
namespace json = boost::json;
using local = asio::local::stream_protocol;
using namespace fields;

namespace {

constexpr std::int64_t kMaxTimeoutMs = 3600 * 1000;
// A host whose program has ended, or whose adapter is gone, waits this long for `session end`.
constexpr auto kIdleAfterEnd = std::chrono::minutes(10);

// The session's host process, if it is still there.
bool hostAlive(const fs::path& info) {
  std::error_code ec;
  auto parsed = json::parse(readFile(info), ec);
  if (ec || !parsed.is_object()) return false;
  std::int64_t pid = num(parsed.get_object(), "hostPid");
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

std::string randomToken() {
  unsigned char bytes[24];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return {};
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (unsigned char b : bytes) t += hex[b >> 4], t += hex[b & 15];
  return t;
}

Millis timeoutOf(const json::object& args) {
  return Millis(std::clamp<std::int64_t>(num(args, "timeoutMs", kDefaultTimeoutMs), 1, kMaxTimeoutMs));
}

class Host {
 public:
  Host(asio::io_context& io, std::string name, SessionFiles files, std::string token)
      : io_(io), session_(io, std::move(name)), files_(std::move(files)), token_(std::move(token)),
        acceptor_(io), idle_(io) {}

  Result<void> listen() {
    boost::system::error_code ec;
    std::error_code fec;
    fs::remove(files_.socket, fec);
    acceptor_.open(local(), ec);
    if (!ec) acceptor_.bind(local::endpoint(files_.socket.string()), ec);
    if (!ec) ::chmod(files_.socket.c_str(), 0600);
    if (!ec) acceptor_.listen(16, ec);
    if (ec) return Error{errors::kSystemCallFailed, "listen on " + files_.socket.string() + ": " + ec.message(), true};
    accept();
    session_.onOver([this] { armIdle(); });
    return {};
  }

  DebugSession& session() { return session_; }
  void armIdle() {
    idle_.expires_after(kIdleAfterEnd);
    idle_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) finish();
    });
  }
  void finish() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    removeFiles(files_);
    // The log stays only when something was said in it.
    std::error_code fec;
    if (fs::file_size(files_.log, fec) == 0 && !fec) fs::remove(files_.log, fec);
    io_.stop();
  }

 private:
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, local::socket peer) {
      if (ec) return;
      serve(std::make_shared<local::socket>(std::move(peer)));
      accept();
    });
  }

  void serve(std::shared_ptr<local::socket> peer) {
    auto buf = std::make_shared<asio::streambuf>(1 << 20);
    asio::async_read_until(*peer, *buf, '\n', [this, peer, buf](const boost::system::error_code& ec, std::size_t n) {
      if (ec) return;
      std::string line(asio::buffers_begin(buf->data()), asio::buffers_begin(buf->data()) + static_cast<std::ptrdiff_t>(n));
      std::error_code jec;
      auto parsed = json::parse(line, jec);
      auto reply = [this, peer](Answer a) {
        auto text = std::make_shared<std::string>(json::serialize(answerJson(a)) + "\n");
        asio::async_write(*peer, asio::buffer(*text), [peer, text](const boost::system::error_code&, std::size_t) {
          boost::system::error_code ignored;
          peer->shutdown(local::socket::shutdown_both, ignored);
        });
        // Each command restarts the wait of a session whose program has ended.
        if (session_.finished() || ended_) armIdle();
      };
      if (jec || !parsed.is_object()) return reply(Answer::failure("a session command is one JSON object on one line"));
      const auto& req = parsed.get_object();
      if (str(req, "token") != token_) return reply(Answer::failure("wrong session token"));
      dispatch(str(req, "command"), req.contains("args") && req.at("args").is_object() ? req.at("args").get_object() : json::object(), reply);
    });
  }

  void dispatch(const std::string& command, const json::object& args, AnswerFn reply) {
    DebugSession& s = session_;
    std::int64_t thread = num(args, "thread"), frame = num(args, "frame");
    if (command == "status") return reply(s.status());
    if (command == "break") {
      BreakSpec b;
      b.file = str(args, "file");
      b.line = num(args, "line");
      if (args.contains("condition")) b.condition = str(args, "condition");
      return s.addBreak(b, reply);
    }
    if (command == "clear") return s.clearBreaks(str(args, "file"), num(args, "line"), reply);
    if (command == "continue") return s.resume(Resume::Continue, thread, timeoutOf(args), reply);
    if (command == "next") return s.resume(Resume::Next, thread, timeoutOf(args), reply);
    if (command == "step") return s.resume(Resume::StepIn, thread, timeoutOf(args), reply);
    if (command == "out") return s.resume(Resume::StepOut, thread, timeoutOf(args), reply);
    if (command == "pause") return s.pause(timeoutOf(args), reply);
    if (command == "wait") return s.wait(timeoutOf(args), reply);
    if (command == "threads") return s.threads(reply);
    if (command == "stack") return s.stack(thread, std::clamp<std::int64_t>(num(args, "levels", 20), 1, 1000), reply);
    if (command == "locals") return s.locals(thread, frame, reply);
    if (command == "eval") return s.evaluate(str(args, "expression"), thread, frame, reply);
    if (command == "console") return s.console(str(args, "text"), reply);
    if (command == "end") {
      ended_ = true;
      return s.end([this, reply](Answer a) {
        reply(std::move(a));
        // After the answer is on its way: the socket and the files go, then the process.
        asio::post(io_, [this] { asio::post(io_, [this] { finish(); }); });
      });
    }
    reply(Answer::failure("unknown session command '" + command + "'"));
  }

  asio::io_context& io_;
  DebugSession session_;
  SessionFiles files_;
  std::string token_;
  local::acceptor acceptor_;
  asio::steady_timer idle_;
  bool ended_ = false;
};

}  // namespace

Result<fs::path> sessionsDir() {
  fs::path base;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x && fs::is_directory(x)) base = fs::path(x) / "strata";
  else base = fs::path("/tmp") / ("strata-" + std::to_string(::getuid()));
  fs::path dir = base / "sessions";
  for (const fs::path& p : {base, dir}) {
    if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) return errnoError(errors::kSystemCallFailed, "mkdir " + p.string());
    struct stat st{};
    if (::lstat(p.c_str(), &st) != 0) return errnoError(errors::kSystemCallFailed, "stat " + p.string());
    // Someone else's folder, or one others can enter, could hand commands to a stranger's session.
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077))
    {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%03o", st.st_mode & 0777);
      return Error{errors::kSystemCallFailed,
                   p.string() + " is not a folder only you can use (owner " + std::to_string(st.st_uid) + ", mode " +
                       mode + "): remove it, or set XDG_RUNTIME_DIR",
                   true};
    }
  }
  return dir;
}

SessionFiles filesOf(const fs::path& dir, const std::string& name) {
  return {dir / (name + ".sock"), dir / (name + ".token"), dir / (name + ".json"), dir / (name + ".log")};
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void removeFiles(const SessionFiles& f) {
  std::error_code ec;
  for (const auto& p : {f.socket, f.token, f.info}) fs::remove(p, ec);
}

std::vector<std::string> liveSessions(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".json") continue;
    std::string name = e.path().stem().string();
    if (hostAlive(e.path())) names.push_back(name);
    else removeFiles(filesOf(dir, name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

json::object answerJson(const Answer& a) {
  json::object o = a.data;
  o["ok"] = a.ok;
  o["text"] = a.text;
  return o;
}

void runHost(const std::string& name, const SessionFiles& files, const SessionStart& spec, Millis timeout,
                          int answerFd) {
  ::setsid();
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  int log = ::open(files.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ::dup2(devnull, 0);
  ::dup2(log >= 0 ? log : devnull, 1);
  ::dup2(log >= 0 ? log : devnull, 2);
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  auto tell = [answerFd](const Answer& a) {
    std::string text = json::serialize(answerJson(a)) + "\n";
    [[maybe_unused]] auto n = ::write(answerFd, text.data(), text.size());
    ::close(answerFd);
  };
  std::string token = randomToken();
  {
    int fd = ::open(files.token.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || token.empty() || ::write(fd, token.data(), token.size()) != static_cast<ssize_t>(token.size())) {
      tell(Answer::failure("cannot write the session token " + files.token.string()));
      ::_exit(1);
    }
    ::close(fd);
  }
  asio::io_context io(1);
  Host host(io, name, files, token);
  if (auto r = host.listen(); !r) {
    tell(Answer::failure(r.error().message));
    ::_exit(1);
  }
  json::object info{{"name", name}, {"hostPid", ::getpid()}, {"started", static_cast<std::int64_t>(::time(nullptr))}};
  std::string target = spec.attachPid        ? "process " + std::to_string(spec.attachPid)
                       : !spec.trace.empty() ? spec.trace
                                             : spec.command.front();
  for (std::size_t i = 1; i < spec.command.size(); ++i) target += " " + spec.command[i];
  info["target"] = target;
  {
    std::ofstream out(files.info);
    out << json::serialize(info) << "\n";
  }
  host.session().start(spec, timeout, [&host, tell](Answer a) {
    a.data["session"] = host.session().name();
    tell(a);
    if (!a.ok && host.session().over()) host.finish();
  });
  io.run();
  host.finish();
  ::_exit(0);
}

}  // namespace strata::cli
