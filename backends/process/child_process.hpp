// A child process started with pipes for its output, watched through a pidfd on the
// session's io_context; and the reaper that keeps detached children from becoming zombies.
#pragma once

#include <boost/asio.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/model.hpp"

namespace strata::backends {

namespace asio = boost::asio;

struct SpawnOptions {
  std::vector<std::string> argv;         // argv[0] is the executable path
  std::string cwd;
  std::vector<std::string> environment;  // "NAME=value"
  bool newProcessGroup = true;           // so terminate reaches the children it started
};

class ChildProcess : public std::enable_shared_from_this<ChildProcess> {
 public:
  struct Callbacks {
    std::function<void(OutputCategory, std::string)> output;
    // Output is flow-controlled: read again only when this says the sink can take more.
    std::function<bool()> congested;
    std::function<void(std::function<void()>)> whenWritable;
    // Called once, after the process exited and its pipes were drained.
    std::function<void(ExitStatus)> finished;
  };

  static Result<std::shared_ptr<ChildProcess>> spawn(asio::io_context& io, const SpawnOptions& options);

  void start(Callbacks callbacks);
  pid_t pid() const { return pid_; }
  bool running() const { return !status_; }
  // Signals the process group (or the process alone when it has none of its own).
  void signal(int signo);
  // Stops listening and leaves the process running: its pipes are drained by a small
  // background process so it never dies of SIGPIPE, and it is reaped when it ends.
  void detach();

  ~ChildProcess();

 private:
  ChildProcess(asio::io_context& io) : io_(io), exitWait_(io), idleTimer_(io) {}
  struct Stream {
    std::unique_ptr<asio::posix::stream_descriptor> pipe;
    OutputCategory category;
    std::string carry;  // an incomplete UTF-8 sequence at the end of the last read
    bool eof = false;
  };
  void readFrom(Stream& stream);
  void onExit();
  void maybeFinish();
  void armIdleTimer();

  asio::io_context& io_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool ownGroup_ = false;
  asio::posix::stream_descriptor exitWait_;
  asio::steady_timer idleTimer_;
  Stream out_{nullptr, OutputCategory::Stdout, {}, false};
  Stream err_{nullptr, OutputCategory::Stderr, {}, false};
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
  std::optional<ExitStatus> status_;
  Callbacks callbacks_;
  bool finished_ = false;
  bool detached_ = false;
};

// Reaps processes that nobody waits for any more (detached debuggees, output drainers).
void reapInBackground(asio::io_context& io, pid_t pid);


}  // namespace strata::backends
