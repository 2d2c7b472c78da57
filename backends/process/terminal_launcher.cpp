// The runInTerminal launcher and its adapter-side counterpart over a 0700 Unix socket.
#include "backends/process/terminal_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace strata::backends {

Result<std::shared_ptr<TerminalSession>> TerminalSession::open(asio::io_context& io) {
  std::string base = std::filesystem::temp_directory_path().string() + "/strata-XXXXXX";
  std::vector<char> tmpl(base.begin(), base.end());
  tmpl.push_back('\0');
  if (!::mkdtemp(tmpl.data())) return errnoError(errors::kSystemCallFailed, "mkdtemp " + base);
  std::shared_ptr<TerminalSession> s(new TerminalSession(io));
  s->dir_ = tmpl.data();
  s->path_ = s->dir_ + "/launcher.sock";
  boost::system::error_code ec;
  asio::local::stream_protocol::endpoint ep(s->path_);
  s->acceptor_.open(ep.protocol(), ec);
  if (!ec) s->acceptor_.bind(ep, ec);
  if (!ec) s->acceptor_.listen(1, ec);
  if (ec) return Error{errors::kListenFailed, "cannot listen on " + s->path_ + ": " + ec.message(), true};
  return s;
}

TerminalSession::~TerminalSession() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  socket_.close(ec);
  std::error_code fec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, fec);
}

void TerminalSession::start(Callbacks callbacks, std::chrono::milliseconds connectTimeout) {
  callbacks_ = std::move(callbacks);
  auto self = shared_from_this();
  timer_.expires_after(connectTimeout);
  timer_.async_wait([self](const boost::system::error_code& ec) {
    if (!ec && self->pid_ == 0)
      self->fail("the program did not start in the terminal within the time limit");
  });
  acceptor_.async_accept(socket_, [self](const boost::system::error_code& ec) {
    if (ec) return;
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
    self->readLine();
  });
}

void TerminalSession::fail(const std::string& why) {
  timer_.cancel();
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  socket_.close(ignored);
  if (pid_ == 0 && callbacks_.started) {
    auto cb = std::move(callbacks_.started);
    callbacks_ = {};
    cb(Error{errors::kTerminalFailed, why, true});
  }
}

void TerminalSession::readLine() {
  auto self = shared_from_this();
  asio::async_read_until(socket_, buffer_, '\n',
                         [self](const boost::system::error_code& ec, std::size_t n) {
                           if (ec) {
                             // The launcher vanished (terminal closed): the program went with it.
                             if (self->pid_ != 0 && !self->exited_) {
                               self->exited_ = true;
                               if (self->callbacks_.exited) self->callbacks_.exited(ExitStatus{129, SIGHUP});
                             } else if (self->pid_ == 0) {
                               self->fail("the terminal launcher exited before starting the program");
                             }
                             return;
                           }
                           std::string line(asio::buffers_begin(self->buffer_.data()),
                                            asio::buffers_begin(self->buffer_.data()) + n - 1);
                           self->buffer_.consume(n);
                           self->handleLine(line);
                           if (!self->exited_) self->readLine();
                         });
}

void TerminalSession::handleLine(const std::string& line) {
  auto space = line.find(' ');
  std::string word = line.substr(0, space);
  std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
  if (word == "pid") {
    pid_ = std::atoll(rest.c_str());
    timer_.cancel();
    if (callbacks_.started) std::exchange(callbacks_.started, {})(pid_);
  } else if (word == "error") {
    fail(rest);
  } else if (word == "exit" || word == "signal") {
    exited_ = true;
    ExitStatus st;
    int n = std::atoi(rest.c_str());
    if (word == "exit") st.exitCode = n;
    else st.signal = n, st.exitCode = 128 + n;
    if (callbacks_.exited) std::exchange(callbacks_.exited, {})(st);
  }
}

namespace {
void sendLine(int fd, const std::string& s) {
  std::string line = s + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}
}  // namespace

int runTerminalLauncher(const std::string& socketPath, char** argv) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socketPath.size() >= sizeof addr.sun_path) {
    std::fprintf(stderr, "strata: launcher socket path too long\n");
    return 127;
  }
  std::strcpy(addr.sun_path, socketPath.c_str());
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "strata: cannot reach the debug adapter at %s: %s\n", socketPath.c_str(),
                 std::strerror(errno));
    return 127;
  }
  // Report exec failure through a close-on-exec pipe: it reads EOF when exec succeeded.
  int execPipe[2];
  if (::pipe2(execPipe, O_CLOEXEC) != 0) return 127;
  pid_t child = ::fork();
  if (child == 0) {
    ::close(execPipe[0]);
    ::execvp(argv[0], argv);
    int err = errno;
    (void)!::write(execPipe[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(execPipe[1]);
  if (child < 0) {
    sendLine(fd, std::string("error fork: ") + std::strerror(errno));
    return 127;
  }
  int err = 0;
  if (::read(execPipe[0], &err, sizeof err) == static_cast<ssize_t>(sizeof err)) {
    sendLine(fd, std::string("error cannot start '") + argv[0] + "': " + std::strerror(err));
    ::waitpid(child, nullptr, 0);
    std::fprintf(stderr, "strata: cannot start '%s': %s\n", argv[0], std::strerror(err));
    return 127;
  }
  sendLine(fd, "pid " + std::to_string(child));
  // Like system(): Ctrl-C in the terminal is for the program, not for its launcher.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    sendLine(fd, "signal " + std::to_string(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  sendLine(fd, "exit " + std::to_string(WEXITSTATUS(status)));
  return WEXITSTATUS(status);
}

}  // namespace strata::backends
