// The plain process runner: runs a program without debugging (noDebug), in the adapter's
// console (output events) or in the client's terminal (runInTerminal).
#pragma once

#include <boost/asio.hpp>

#include <memory>

#include "backends/backend.hpp"
#include "backends/process/child_process.hpp"
#include "backends/process/terminal_launcher.hpp"

namespace strata::backends {

class ProcessBackend final : public Backend {
 public:
  ProcessBackend(asio::io_context& io, BackendHost& host) : io_(io), host_(host) {}
  ~ProcessBackend() override;

  std::string name() const override { return "process"; }
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override { reply({}); }
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  void abandonStart() override;

 private:
  void launchInTerminal(const LaunchSpec& spec, Reply<void> reply);
  void finished(const ExitStatus& status);
  pid_t pid() const;

  asio::io_context& io_;
  BackendHost& host_;
  std::shared_ptr<ChildProcess> child_;
  std::shared_ptr<TerminalSession> terminal_;
  std::string programName_;
  bool done_ = false;
  std::vector<Reply<void>> waitingForExit_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
