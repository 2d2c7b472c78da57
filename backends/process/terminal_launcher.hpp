// Running a debuggee in the client's terminal (runInTerminal): the adapter side that waits
// for the launcher to report, and the launcher itself (`strata-dap --launcher SOCKET -- ...`).
#pragma once

#include <boost/asio.hpp>

#include <functional>
#include <memory>
#include <string>

#include "backends/model.hpp"

namespace strata::backends {

namespace asio = boost::asio;

// Listens on a private Unix socket for one launcher. The launcher reports "pid N", then
// "exit N" or "signal N" (or "error TEXT" when it could not start the program).
class TerminalSession : public std::enable_shared_from_this<TerminalSession> {
 public:
  struct Callbacks {
    std::function<void(Result<std::int64_t>)> started;  // the program's pid, or why not
    std::function<void(ExitStatus)> exited;
  };
  static Result<std::shared_ptr<TerminalSession>> open(asio::io_context& io);
  ~TerminalSession();

  const std::string& socketPath() const { return path_; }
  void start(Callbacks callbacks, std::chrono::milliseconds connectTimeout);
  void fail(const std::string& why);
  std::int64_t pid() const { return pid_; }
  bool exited() const { return exited_; }

 private:
  explicit TerminalSession(asio::io_context& io) : acceptor_(io), socket_(io), timer_(io) {}
  void readLine();
  void handleLine(const std::string& line);

  asio::local::stream_protocol::acceptor acceptor_;
  asio::local::stream_protocol::socket socket_;
  asio::steady_timer timer_;
  asio::streambuf buffer_;
  std::string dir_, path_;
  Callbacks callbacks_;
  std::int64_t pid_ = 0;
  bool exited_ = false;
};

// The launcher's main: connects to SOCKET, runs argv, reports, exits with the program's code.
int runTerminalLauncher(const std::string& socketPath, char** argv);

}  // namespace strata::backends
