// The one interface every backend implements (native, Python, the plain process runner),
// and what a backend may ask of the session that hosts it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/model.hpp"

namespace strata::backends {

// What the session offers a backend: events towards the client and a few services.
// Called on the session's thread only; backends with their own threads post back first.
class BackendHost {
 public:
  virtual ~BackendHost() = default;
  virtual void output(OutputCategory category, std::string text) = 0;
  virtual void processStarted(const std::string& name, std::int64_t pid, bool launched) = 0;
  // The debuggee is gone; after this the backend reports nothing more.
  virtual void exited(const ExitStatus& status) = 0;
  // Flow control for producers of bulk output: when congested, wait for whenWritable.
  virtual bool congested() const = 0;
  virtual void whenWritable(std::function<void()> resume) = 0;
  // Whether the client can run a command in its terminal, and the request itself.
  virtual bool canRunInTerminal() const = 0;
  virtual void runInTerminal(const TerminalLaunch& launch, Reply<TerminalProcess> reply) = 0;
  // The strata-dap executable, for helper modes such as the terminal launcher.
  virtual const std::string& adapterExecutable() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  virtual void launch(const LaunchSpec& spec, Reply<void> reply) = 0;
  virtual void configurationDone(Reply<void> reply) = 0;
  virtual void setSourceBreakpoints(const std::string& path,
                                    const std::vector<SourceBreakpointSpec>& breakpoints,
                                    Reply<std::vector<BreakpointState>> reply) = 0;
  virtual void threads(Reply<std::vector<ThreadInfo>> reply) = 0;
  // Ends the debuggee (force: SIGKILL now; else a polite SIGTERM). exited() follows.
  virtual void terminate(bool force, Reply<void> reply) = 0;
  // Leaves the debuggee running as if it had never been debugged.
  virtual void detach(Reply<void> reply) = 0;
};

}  // namespace strata::backends
