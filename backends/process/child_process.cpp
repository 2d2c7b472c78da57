// Spawning with posix_spawn (safe in a threaded adapter), pidfd exit watching, and output
// pumping with backpressure so 100 MB of output arrives whole and in order.
#include "backends/process/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "strata/protocol/json.hpp"

namespace strata::backends {
namespace {

int openPidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// A one-shot watcher: waits for the pidfd to become readable, reaps, forgets.
void watchAndReap(asio::io_context& io, pid_t pid) {
  int fd = openPidfd(pid);
  if (fd < 0) {
    ::waitpid(pid, nullptr, WNOHANG);
    return;
  }
  auto sd = std::make_shared<asio::posix::stream_descriptor>(io, fd);
  sd->async_wait(asio::posix::stream_descriptor::wait_read,
                 [sd, pid](const boost::system::error_code&) { ::waitpid(pid, nullptr, WNOHANG); });
}

}  // namespace

std::string signalName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

void reapInBackground(asio::io_context& io, pid_t pid) { watchAndReap(io, pid); }

Result<std::shared_ptr<ChildProcess>> ChildProcess::spawn(asio::io_context& io,
                                                          const SpawnOptions& options) {
  int outPipe[2], errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0) return errnoError(errors::kSystemCallFailed, "pipe");
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(outPipe[0]);
    ::close(outPipe[1]);
    return errnoError(errors::kSystemCallFailed, "pipe", e);
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2);
  posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.newProcessGroup) flags |= POSIX_SPAWN_SETPGROUP;
  posix_spawnattr_setflags(&attr, flags);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  // The adapter ignores SIGPIPE; the debuggee must get the default dispositions back.
  posix_spawnattr_setsigdefault(&attr, &all);

  std::vector<char*> argv, envp;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : options.environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, options.argv[0].c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  if (rc != 0) {
    ::close(outPipe[0]);
    ::close(errPipe[0]);
    return errnoError(errors::kLaunchFailed, "cannot start '" + options.argv[0] + "'", rc);
  }
  std::shared_ptr<ChildProcess> child(new ChildProcess(io));
  child->pid_ = pid;
  child->ownGroup_ = options.newProcessGroup;
  child->pidfd_ = openPidfd(pid);
  if (child->pidfd_ < 0) {
    int e = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(outPipe[0]);
    ::close(errPipe[0]);
    return errnoError(errors::kSystemCallFailed, "pidfd_open", e);
  }
  child->exitWait_.assign(child->pidfd_);
  child->out_.pipe = std::make_unique<asio::posix::stream_descriptor>(io, outPipe[0]);
  child->err_.pipe = std::make_unique<asio::posix::stream_descriptor>(io, errPipe[0]);
  return child;
}

ChildProcess::~ChildProcess() {
  if (!status_ && !detached_ && pid_ > 0) {
    // Never leave a zombie or an orphan writing into a closed pipe.
    detach();
  }
}

void ChildProcess::start(Callbacks callbacks) {
  callbacks_ = std::move(callbacks);
  auto self = shared_from_this();
  exitWait_.async_wait(asio::posix::stream_descriptor::wait_read,
                       [self](const boost::system::error_code& ec) {
                         if (!ec && !self->detached_) self->onExit();
                       });
  readFrom(out_);
  readFrom(err_);
}

void ChildProcess::readFrom(Stream& stream) {
  if (detached_ || stream.eof) return;
  auto self = shared_from_this();
  if (callbacks_.congested && callbacks_.congested()) {
    callbacks_.whenWritable([self, &stream] {
      if (!self->detached_) self->readFrom(stream);
    });
    return;
  }
  stream.pipe->async_read_some(
      asio::buffer(buffer_.data() + (&stream == &out_ ? 0 : buffer_.size() / 2), buffer_.size() / 2),
      [self, &stream](const boost::system::error_code& ec, std::size_t n) {
        if (self->detached_) return;
        if (ec) {
          stream.eof = true;
          if (!stream.carry.empty() && self->callbacks_.output)
            self->callbacks_.output(stream.category, protocol::sanitizeUtf8(stream.carry));
          stream.carry.clear();
          self->maybeFinish();
          return;
        }
        const char* base = self->buffer_.data() + (&stream == &self->out_ ? 0 : self->buffer_.size() / 2);
        std::string text = protocol::sanitizeUtf8(std::string_view(base, n), &stream.carry);
        if (!text.empty() && self->callbacks_.output)
          self->callbacks_.output(stream.category, std::move(text));
        if (self->status_) self->armIdleTimer();
        self->readFrom(stream);
      });
}

void ChildProcess::onExit() {
  siginfo_t info{};
  bool unknown = false;
  if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_), &info, WEXITED) != 0) {
    // Fall back to waitpid when P_PIDFD is unknown to an old kernel.
    int st = 0;
    if (::waitpid(pid_, &st, 0) < 0) unknown = true;  // reaped by another waiter (a tracer of ours)
    info.si_code = WIFSIGNALED(st) ? CLD_KILLED : CLD_EXITED;
    info.si_status = WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
  }
  ExitStatus status;
  status.known = !unknown;
  if (info.si_code == CLD_EXITED) {
    status.exitCode = info.si_status;
  } else {
    status.signal = info.si_status;
    status.exitCode = 128 + info.si_status;
  }
  status_ = status;
  armIdleTimer();
  maybeFinish();
}

void ChildProcess::armIdleTimer() {
  // A grandchild may hold the pipes open after the child exited; stop waiting for their end
  // once they have been quiet for a while, but never while output is still flowing.
  idleTimer_.expires_after(std::chrono::milliseconds(1500));
  auto self = shared_from_this();
  idleTimer_.async_wait([self](const boost::system::error_code& ec) {
    if (ec || self->finished_ || self->detached_) return;
    if (self->callbacks_.congested && self->callbacks_.congested()) {
      self->armIdleTimer();
      return;
    }
    self->out_.eof = self->err_.eof = true;
    self->maybeFinish();
  });
}

void ChildProcess::maybeFinish() {
  if (finished_ || !status_ || !out_.eof || !err_.eof) return;
  finished_ = true;
  idleTimer_.cancel();
  boost::system::error_code ignored;
  out_.pipe->close(ignored);
  err_.pipe->close(ignored);
  exitWait_.close(ignored);
  if (callbacks_.finished) {
    auto cb = std::move(callbacks_.finished);
    callbacks_ = {};
    cb(*status_);
  }
}

void ChildProcess::signal(int signo) {
  if (status_ || pid_ <= 0) return;
  if (ownGroup_) ::kill(-pid_, signo);
  ::kill(pid_, signo);
}

void ChildProcess::detach() {
  if (detached_ || finished_) return;
  detached_ = true;
  idleTimer_.cancel();
  boost::system::error_code ignored;
  int fds[2] = {out_.eof ? -1 : out_.pipe->release(), err_.eof ? -1 : err_.pipe->release()};
  if (fds[0] >= 0 || fds[1] >= 0) {
    pid_t drainer = ::fork();
    if (drainer == 0) {
      // Only async-signal-safe calls from here: the adapter may be multithreaded.
      int keepA = fds[0] >= 0 ? fds[0] : fds[1], keepB = fds[1] >= 0 ? fds[1] : fds[0];
      int lo = keepA < keepB ? keepA : keepB, hi = keepA < keepB ? keepB : keepA;
      if (lo > 0) ::syscall(SYS_close_range, 0u, static_cast<unsigned>(lo - 1), 0u);
      if (hi > lo + 1) ::syscall(SYS_close_range, static_cast<unsigned>(lo + 1), static_cast<unsigned>(hi - 1), 0u);
      ::syscall(SYS_close_range, static_cast<unsigned>(hi + 1), ~0u, 0u);
      char sink[65536];
      struct pollfd pfds[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
      int open = (fds[0] >= 0) + (fds[1] >= 0);
      while (open > 0) {
        if (::poll(pfds, 2, -1) < 0) {
          if (errno == EINTR) continue;
          break;
        }
        for (auto& p : pfds) {
          if (p.fd < 0 || p.revents == 0) continue;
          ssize_t r = ::read(p.fd, sink, sizeof sink);
          if (r > 0 || (r < 0 && errno == EINTR)) continue;
          p.fd = -1;  // poll ignores negative descriptors
          --open;
        }
      }
      ::_exit(0);
    }
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
    if (drainer > 0) reapInBackground(io_, drainer);
  }
  out_.pipe->close(ignored);
  err_.pipe->close(ignored);
  exitWait_.close(ignored);  // closes the pidfd
  if (!status_) reapInBackground(io_, pid_);
  callbacks_ = {};
}

}  // namespace strata::backends
