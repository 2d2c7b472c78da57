// strata-dap: the debug adapter. Serves DAP over stdio (default), on a TCP port (many
// sessions, one after another and at once), or by dialing a client that listens.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

#include "adapter/builtin_backends.hpp"
#include "adapter/session.hpp"
#include "adapter/token.hpp"
#include "backends/native/backend/native_backend.hpp"
#include "backends/process/terminal_launcher.hpp"

namespace {

using namespace strata;
namespace asio = boost::asio;

const char* kUsage = R"(strata-dap — the Strata debug adapter (Debug Adapter Protocol)

usage: strata-dap [--stdio]                serve one session over stdin/stdout (default)
       strata-dap --listen HOST:PORT       serve sessions on TCP (port 0 picks one; the chosen
                                           address is printed as "listening on HOST:PORT")
       strata-dap --connect HOST:PORT      dial a client that listens, serve one session
options:
  --log FILE          append every message in and out, timestamped, to FILE
  --token TOKEN       a listener requires TOKEN from every peer as its first line
                      ("STRATA-TOKEN TOKEN"); --connect sends that line first
  --token-file FILE   read the token from FILE's first line; a listener writes a new one
                      there (mode 0600) when FILE does not exist
  --version           print the version
  --help              print this help

A listener binds to loopback unless HOST names another address; a listener on any other
address requires a token (one is generated when none is given) because a debugger runs
arbitrary code in its debuggee.
)";

struct Options {
  enum class Mode { Stdio, Listen, Connect } mode = Mode::Stdio;
  std::string address;
  std::string logPath;
  std::string token;
  std::string tokenFile;
};

std::string selfExecutable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("strata-dap") : p.string();
}

class Server {
 public:
  Server(asio::io_context& io, Options options, std::shared_ptr<adapter::Log> log)
      : io_(io), options_(std::move(options)), log_(std::move(log)), adapterExe_(selfExecutable()) {}

  void serve(std::shared_ptr<protocol::Connection> connection, bool exitWhenDone) {
    int id = nextId_++;
    // A session's last teardown step may run after the server is gone (main's final poll).
    std::weak_ptr<bool> alive = alive_;
    auto session = std::make_shared<adapter::Session>(
        io_, connection, adapter::SessionOptions{id, log_, adapterExe_, adapter::builtinBackends()},
        [this, alive, id, exitWhenDone] {
          if (alive.expired()) return;
          sessions_.erase(id);
          if (exitWhenDone) io_.stop();
        });
    sessions_[id] = session;
    session->start();
  }

  void setToken(std::string token) { options_.token = std::move(token); }

  void acceptTcp(asio::ip::tcp::socket socket) {
    if (options_.token.empty()) {
      serve(std::make_shared<protocol::Connection>(protocol::makeSocketStream(std::move(socket))), false);
      return;
    }
    adapter::checkToken(io_, std::move(socket), options_.token,
                        [this](asio::ip::tcp::socket s) {
                          serve(std::make_shared<protocol::Connection>(
                                    protocol::makeSocketStream(std::move(s))),
                                false);
                        });
  }

  void shutdown() {
    // Dropping every connection detaches every debuggee: they run on untouched.
    auto copy = sessions_;
    for (auto& [id, s] : copy) s->closeAfterFlush();
  }

 private:
  asio::io_context& io_;
  Options options_;
  std::shared_ptr<adapter::Log> log_;
  std::string adapterExe_;
  int nextId_ = 1;
  std::map<int, std::shared_ptr<adapter::Session>> sessions_;
  // Expires first as the server goes (declared last): sessions closing later see it gone.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

int fail(const std::string& message) {
  std::fprintf(stderr, "strata-dap: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      (void)name;
      return std::string(argv[++i]);
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("strata-dap %s\n", STRATA_VERSION);
      return 0;
    } else if (a == "--stdio") {
      options.mode = Options::Mode::Stdio;
    } else if (a == "--listen" || a == "--connect") {
      auto v = value(a.c_str());
      if (!v) return fail(a + " needs HOST:PORT");
      options.mode = a == "--listen" ? Options::Mode::Listen : Options::Mode::Connect;
      options.address = *v;
    } else if (a == "--log") {
      auto v = value("--log");
      if (!v) return fail("--log needs a file name");
      options.logPath = *v;
    } else if (a == "--token") {
      auto v = value("--token");
      if (!v || v->empty()) return fail("--token needs a value");
      if (v->size() > adapter::kMaxTokenLength || v->find_first_of("\r\n") != std::string::npos)
        return fail("--token: a token is one line of at most " + std::to_string(adapter::kMaxTokenLength) +
                    " characters");
      options.token = *v;
    } else if (a == "--token-file") {
      auto v = value("--token-file");
      if (!v) return fail("--token-file needs a file name");
      options.tokenFile = *v;
    } else if (a == "--launcher") {
      // Internal: the runInTerminal launcher. `--launcher SOCKET -- PROGRAM ARGS...`
      if (i + 2 >= argc || std::strcmp(argv[i + 2], "--") != 0 || i + 3 >= argc)
        return fail("--launcher needs SOCKET -- PROGRAM [ARGS...]");
      return backends::runTerminalLauncher(argv[i + 1], argv + i + 3);
    } else {
      return fail("unknown option '" + a + "' (see --help)");
    }
  }

  ::signal(SIGPIPE, SIG_IGN);  // a vanished client is an error code, not a death

  std::shared_ptr<adapter::Log> log;
  if (!options.logPath.empty()) {
    std::string error;
    log = adapter::Log::open(options.logPath, &error);
    if (!log) return fail(error);
  }

  asio::io_context io(1);
  auto serverOwner = std::make_unique<Server>(io, options, log);
  Server& server = *serverOwner;
  // A signal may still come while the last sessions tear down, after the server is gone.
  Server* serving = &server;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    if (serving) serving->shutdown();
    io.stop();
  });

  std::unique_ptr<protocol::Listener> listener;
  switch (options.mode) {
    case Options::Mode::Stdio: {
      int in = ::fcntl(0, F_DUPFD_CLOEXEC, 3), out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
      if (in < 0 || out < 0) return fail(std::string("cannot use stdin/stdout: ") + std::strerror(errno));
      // Nothing else may write to the protocol stream: stray prints go to stderr.
      ::dup2(2, 1);
      server.serve(std::make_shared<protocol::Connection>(
                       protocol::makeDescriptorStream(io, in, out, "stdio")),
                   true);
      break;
    }
    case Options::Mode::Connect: {
      auto where = protocol::parseHostPort(options.address);
      if (!where) return fail(where.error().message);
      if (!options.tokenFile.empty() && options.token.empty()) {
        auto t = adapter::loadToken(options.tokenFile);
        if (!t) return fail(t.error().message);
        options.token = *t;
      }
      auto socket = protocol::dial(io, *where);
      if (!socket) return fail(socket.error().message);
      if (!options.token.empty()) {
        std::string line = "STRATA-TOKEN " + options.token + "\r\n";
        boost::system::error_code ec;
        asio::write(*socket, asio::buffer(line), ec);
        if (ec) return fail("cannot send the token: " + ec.message());
      }
      server.serve(std::make_shared<protocol::Connection>(protocol::makeSocketStream(std::move(*socket))),
                   true);
      break;
    }
    case Options::Mode::Listen: {
      auto where = protocol::parseHostPort(options.address);
      if (!where) return fail(where.error().message);
      boost::system::error_code ec;
      auto addr = asio::ip::make_address(where->host, ec);
      bool loopback = !ec ? protocol::isLoopback(addr) : where->host == "localhost";
      if (!options.tokenFile.empty() && options.token.empty()) {
        auto t = adapter::loadOrCreateToken(options.tokenFile);
        if (!t) return fail(t.error().message);
        options.token = *t;
      }
      // Nothing is accepted before io.run(): the token can wait for the port the listener got.
      auto l = protocol::Listener::open(io, *where, [&server](asio::ip::tcp::socket s) {
        server.acceptTcp(std::move(s));
      });
      if (!l) return fail(l.error().message);
      listener = std::move(*l);
      auto ep = listener->endpoint();
      if (!loopback && options.token.empty()) {
        std::string path = adapter::defaultTokenPath(ep.port());
        auto t = adapter::loadOrCreateToken(path);
        if (!t) return fail(t.error().message);
        options.token = *t;
        std::fprintf(stderr,
                     "strata-dap: %s is not a loopback address; peers must send the token stored in %s\n",
                     where->host.c_str(), path.c_str());
      }
      server.setToken(options.token);
      std::string host = ep.address().is_v6() ? "[" + ep.address().to_string() + "]" : ep.address().to_string();
      std::printf("listening on %s:%u\n", host.c_str(), static_cast<unsigned>(ep.port()));
      std::fflush(stdout);
      break;
    }
  }
  io.run();
  listener.reset();
  serving = nullptr;
  serverOwner.reset();  // sessions still open end here: their debuggees are let go
  io.restart();
  io.poll();  // handlers that still hold a session (its last teardown step) run now
  // Native debuggers given up by sessions finish tearing down (a launched program killed, an
  // attached one let go) before the adapter exits; one stuck past the limit is left to the
  // kernel, which ends a launched program and detaches an attached one as the adapter exits.
  if (!backends::NativeBackend::finishTeardowns(std::chrono::seconds(10))) std::_Exit(0);
  return 0;
}
