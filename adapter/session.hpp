// One DAP session: parses what the client sends, routes requests to handlers, keeps the
// lifecycle state, owns the backend and turns its reports into events.
#pragma once

#include <boost/asio.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "adapter/handler.hpp"
#include "adapter/handles.hpp"
#include "adapter/log.hpp"
#include "backends/backend.hpp"
#include "strata/protocol/transport.hpp"

namespace strata::adapter {

namespace asio = boost::asio;

class Session;

// Creates the backend for a launch or an attach. strata-dap passes builtinBackends()
// (adapter/builtin_backends.hpp); tests and the session fuzzer pass fakes, and link the
// session without the debuggers.
struct BackendFactory {
  std::function<std::unique_ptr<backends::Backend>(Session&, const backends::LaunchSpec&)> launch;
  std::function<std::unique_ptr<backends::Backend>(Session&, const backends::AttachSpec&)> attach;
  // What each debugging backend these can create supports, known before any exists: the
  // initialize response promises what all of them do (adapter/capabilities.hpp).
  std::vector<backends::BackendFeatures> debuggers;
};

struct SessionOptions {
  int id = 1;
  std::shared_ptr<Log> log;
  std::string adapterExecutable;
  BackendFactory backendFactory;
};

class Session final : public backends::BackendHost, public std::enable_shared_from_this<Session> {
 public:
  enum class State { AwaitingInitialize, Initialized, Launched, Ended };

  Session(asio::io_context& io, std::shared_ptr<protocol::Connection> connection,
          SessionOptions options, std::function<void()> onEnd);
  ~Session() override;
  void start();

  // ---- for handlers ----
  asio::io_context& io() { return io_; }
  State state() const { return state_; }
  const protocol::InitializeRequestArguments& client() const { return client_; }
  void markInitialized(const protocol::InitializeRequestArguments& client);
  const protocol::Capabilities& capabilities() const { return capabilities_; }
  // The debugging backends a launch or attach may pick, as the factory describes them.
  const std::vector<backends::BackendFeatures>& debuggers() const { return options_.backendFactory.debuggers; }
  void sendEvent(std::string_view event, json::value body = nullptr);
  void reverseRequest(const std::string& command, json::value arguments,
                      std::function<void(Result<protocol::Response>)> onResponse);
  backends::Backend* backend() { return backend_.get(); }
  // The backends for `launch` and `attach`, from SessionOptions::backendFactory.
  std::unique_ptr<backends::Backend> createBackend(const backends::LaunchSpec& spec);
  std::unique_ptr<backends::Backend> createAttachBackend(const backends::AttachSpec& spec);
  void setBackend(std::unique_ptr<backends::Backend> backend, bool launched);
  bool launchedDebuggee() const { return launchedDebuggee_; }
  bool debuggeeEnded() const { return debuggeeEnded_; }
  // Answers `cancel`: true when the request was still in flight and is now answered.
  bool cancel(std::int64_t requestId);
  // Closes the connection once everything queued has been written.
  void closeAfterFlush();
  void note(const std::string& text);

  // ---- BackendHost ----
  void output(backends::OutputCategory category, std::string text) override;
  void processStarted(const std::string& name, std::int64_t pid, bool launched) override;
  void exited(const backends::ExitStatus& status) override;
  bool congested() const override;
  void whenWritable(std::function<void()> resume) override;
  bool canRunInTerminal() const override;
  void runInTerminal(const backends::TerminalLaunch& launch,
                     backends::Reply<backends::TerminalProcess> reply) override;
  const std::string& adapterExecutable() const override { return options_.adapterExecutable; }
  void stopped(const backends::StopReport& stop) override;
  void continued(std::int64_t threadId, bool allThreads) override;
  void threadChanged(std::int64_t threadId, bool started) override;
  void breakpointChanged(const backends::BreakpointReport& state) override;
  void moduleChanged(const backends::ModuleInfo& module, const std::string& reason) override;

  // ---- ids: frames and variables live until the next resume, sources and breakpoints
  // for the session ----
  using Handles = HandleTable<backends::Backend>;
  Handles& frames() { return frames_; }
  Handles& variableRefs() { return variables_; }
  Handles& sources() { return sources_; }
  Handles& breakpointIds() { return breakpoints_; }
  // The debuggee runs again: every frame id and variables reference handed out is void.
  void resumed();
  // How often that happened. A reply to a request made before the latest resume hands out
  // none of the backend's frame ids or variables references: they belong to a stop that is
  // over, and the backend may already use their numbers for something else.
  std::uint64_t resumes() const { return resumes_; }
  // Which threads run, as the requests forwarded and the stops reported say: `continue`, a step
  // or configurationDone set them running; a stop, or a pause request, stops one or all. A
  // request that needs a stopped thread gets the same answer whichever backend owns it
  // (requireStopped).
  struct RunState {
    bool all = false;                        // every thread runs...
    std::set<std::int64_t> except;           // ...but these (all), or only these (!all)
  };
  RunState runState() const { return run_; }
  void setRunState(RunState state) { run_ = std::move(state); }
  void threadsResumed(std::int64_t threadId, bool allThreads);
  bool threadRunning(std::int64_t threadId) const;
  std::optional<Error> requireStopped(std::int64_t threadId, std::string_view command) const;
  bool sawStop() const { return sawStop_; }
  // Launch/attach succeeded: a `capabilities` event with what the backend brings beyond
  // `initialize` (its exception filters among them), then `initialized`, so the client
  // configures breakpoints and filters knowing them.
  void backendStarted();
  // Breakpoints set before launch/attach (some clients send them first): kept, answered with
  // ids now, and placed once launch/attach has started the backend, each placement reported
  // as a `breakpoint` changed event under the id given first. Each returns those ids.
  std::vector<std::int64_t> keepEarlyBreakpoints(const std::string& path,
                                                 std::vector<backends::SourceBreakpointSpec> specs);
  std::vector<std::int64_t> keepEarlyFunctionBreakpoints(std::vector<backends::FunctionBreakpointSpec> specs);
  std::vector<std::int64_t> keepEarlyExceptionFilters(std::vector<backends::ExceptionFilterSpec> specs);
  // Called by launch/attach right after the backend started (its requests queue until ready).
  void applyEarlyBreakpoints();

 private:
  struct InFlight {
    std::string command;
    const Handler* handler = nullptr;
  };

  void onFrame(std::string body);
  void onFramingError(const std::string& reason);
  void onClosed();
  void dispatch(protocol::Request request);
  void respond(std::int64_t requestSeq, const std::string& command, Result<json::value> body);
  void send(json::value message);
  void reportDroppedMessage(const std::string& why);

  asio::io_context& io_;
  std::shared_ptr<protocol::Connection> connection_;
  SessionOptions options_;
  std::function<void()> onEnd_;
  std::map<std::string, std::unique_ptr<Handler>, std::less<>> handlers_;
  protocol::Capabilities capabilities_;
  protocol::InitializeRequestArguments client_;
  State state_ = State::AwaitingInitialize;
  std::int64_t nextSeq_ = 1;
  std::map<std::int64_t, InFlight> inFlight_;
  std::map<std::int64_t, std::function<void(Result<protocol::Response>)>> reverse_;
  std::unique_ptr<backends::Backend> backend_;
  Handles frames_, variables_, sources_, breakpoints_;
  std::uint64_t resumes_ = 0;
  template <class Spec>
  struct Early {
    std::vector<Spec> specs;
    std::vector<std::int64_t> ids;
  };
  std::map<std::string, Early<backends::SourceBreakpointSpec>> earlySources_;
  std::optional<Early<backends::FunctionBreakpointSpec>> earlyFunctions_;
  std::optional<Early<backends::ExceptionFilterSpec>> earlyExceptions_;
  std::int64_t nextEarly_ = 0;  // owner-less locals for the ids of early breakpoints
  std::vector<std::int64_t> earlyIds(std::size_t count);
  backends::Reply<std::vector<backends::BreakpointReport>> placedEarly(std::vector<std::int64_t> ids,
                                                                      std::optional<std::string> path);
  RunState run_;
  bool sawStop_ = false;
  bool launchedDebuggee_ = false;
  bool debuggeeEnded_ = false;
  bool ended_ = false;
};

}  // namespace strata::adapter
