// One DAP session: parses what the client sends, routes requests to handlers, keeps the
// lifecycle state, owns its backends (the debugger that runs the program, the GPU backend
// beside it) and turns their reports into events.
#pragma once

#include <boost/asio.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "adapter/handler.hpp"
#include "adapter/handles.hpp"
#include "adapter/log.hpp"
#include "adapter/source_map.hpp"
#include "backends/backend.hpp"
#include "backends/breakpoint_book.hpp"
#include "backends/gpu.hpp"
#include "strata/protocol/transport.hpp"

namespace strata::adapter {

namespace asio = boost::asio;

class Session;

// Creates the session's backends. strata-dap passes builtinBackends()
// (adapter/builtin_backends.hpp); tests and the session fuzzer pass fakes, and link the
// session without the debuggers. Each backend reports through the host it is given, which
// tells the session which backend a report (and the ids inside it) comes from.
struct BackendFactory {
  // The debugger for a launch or an attach.
  std::function<std::unique_ptr<backends::Backend>(Session&, backends::BackendHost&, const backends::LaunchSpec&)> launch;
  std::function<std::unique_ptr<backends::Backend>(Session&, backends::BackendHost&, const backends::AttachSpec&)> attach;
  // The backend that serves GPU data beside the debugger, made with the session (none: the
  // session answers the GPU requests and !gpu with an error).
  std::function<std::unique_ptr<backends::Backend>(Session&, backends::BackendHost&)> gpu;
  // What each debugging backend these can create supports, known before any exists: the
  // initialize response promises what all of them do (adapter/capabilities.hpp).
  std::vector<backends::BackendFeatures> debuggers;
  // After a crash in a program whose debugger cannot stop there (a Python session, told by its
  // agent): a debugger that attaches to it and stops at the fault, calling `release` once it is
  // in (none: the program dies as it would have).
  std::function<std::unique_ptr<backends::Backend>(Session&, backends::BackendHost&, const backends::CrashReport&,
                                                   std::function<void()> release)>
      postMortem;
  // What the backends serving every session beside the debugger bring (the GPU requests):
  // promised in the initialize response too.
  std::vector<backends::BackendFeatures> services;
  // Reads the stacks of several processes into one tree (the parallelStacks request; none: the
  // request is answered with an error). It blocks: the session calls it on its worker
  // (Session::offload), and it stops early once `cancelled()` says so.
  std::function<Result<boost::json::value>(std::vector<int> pids, bool children, bool pythonOnly,
                                           const std::function<bool()>& cancelled)>
      parallelStacks;
};

struct SessionOptions {
  int id = 1;
  std::shared_ptr<Log> log;
  std::string adapterExecutable;
  BackendFactory backendFactory;
};

class Session final : public std::enable_shared_from_this<Session> {
 public:
  enum class State { AwaitingInitialize, Initialized, Launched, Ended };

  Session(asio::io_context& io, std::shared_ptr<protocol::Connection> connection,
          SessionOptions options, std::function<void()> onEnd);
  ~Session();
  void start();

  // ---- for handlers ----
  asio::io_context& io() { return io_; }
  // Blocking work (reading other processes' stacks) on the session's own worker thread, one job
  // at a time, so that the session keeps answering; `done` gets the result on the session's
  // thread. When the session ends, a job under way is told to stop (`cancelled()`) and the
  // worker is joined.
  using Offloaded = std::function<Result<boost::json::value>(const std::function<bool()>& cancelled)>;
  void offload(Offloaded work, std::function<void(Result<boost::json::value>)> done);
  State state() const { return state_; }
  const protocol::InitializeRequestArguments& client() const { return client_; }
  void markInitialized(const protocol::InitializeRequestArguments& client);
  const protocol::Capabilities& capabilities() const { return capabilities_; }
  // The debugging backends a launch or attach may pick, as the factory describes them.
  const std::vector<backends::BackendFeatures>& debuggers() const { return options_.backendFactory.debuggers; }
  const BackendFactory& backendFactory() const { return options_.backendFactory; }
  void sendEvent(std::string_view event, json::value body = nullptr);
  void reverseRequest(const std::string& command, json::value arguments,
                      std::function<void(Result<protocol::Response>)> onResponse);
  // The debugger that runs the program (null before launch/attach, and in a session that only
  // opened a GPU trace).
  backends::Backend* backend() { return debugger_; }
  // The GPU backend and its service (null: this session has none).
  backends::Backend* gpuBackend() { return gpu_; }
  backends::GpuService* gpu() { return gpu_ ? gpu_->gpu() : nullptr; }
  // Every backend the session holds, the debugger first.
  std::vector<backends::Backend*> allBackends() const;
  // Makes the debugger for `launch` or `attach` (SessionOptions::backendFactory) and holds it.
  backends::Backend* startDebugger(const backends::LaunchSpec& spec);
  backends::Backend* startAttachDebugger(const backends::AttachSpec& spec);
  // A launch that runs no program (launch {"trace"}): the session is launched, with no debugger.
  void launchedWithoutProgram();
  // Which backend a thread id belongs to: the one that reported it (its threads, stops and
  // thread events), else the debugger.
  backends::Backend* threadOwner(std::int64_t threadId) const;
  void noteThreads(backends::Backend* owner, const std::vector<backends::ThreadInfo>& threads);
  bool launchedDebuggee() const { return launchedDebuggee_; }
  bool debuggeeEnded() const { return debuggeeEnded_; }
  // Answers `cancel`: true when the request was still in flight and is now answered.
  bool cancel(std::int64_t requestId);
  // Closes the connection once everything queued has been written.
  void closeAfterFlush();
  void note(const std::string& text);

  // ---- what backends report, through their hosts (Session::Port); `from` is the reporter ----
  void output(backends::OutputCategory category, std::string text);
  void processStarted(const std::string& name, std::int64_t pid, bool launched);
  // The debuggee's process (the launcher of a job's ranks), 0 before it has one.
  std::int64_t processId() const { return processId_; }
  // The launch's or attach's sourceMap: every path to and from the client goes through it.
  const SourceMap& sourceMap() const { return sourceMap_; }
  void setSourceMap(SourceMap map) { sourceMap_ = std::move(map); }
  void exited(backends::Backend* from, const backends::ExitStatus& status);
  bool congested() const;
  void whenWritable(std::function<void()> resume);
  bool canRunInTerminal() const;
  void runInTerminal(const backends::TerminalLaunch& launch, backends::Reply<backends::TerminalProcess> reply);
  const std::string& adapterExecutable() const { return options_.adapterExecutable; }
  bool canStartDebugging() const;
  void startDebugging(const std::string& request, const std::string& configuration, backends::Reply<void> reply);
  void stopped(backends::Backend* from, const backends::StopReport& stop);
  // A crash the debugger cannot stop at: a post-mortem debugger takes the session over.
  bool takesCrashes(const backends::Backend* from) const;
  void crashed(backends::Backend* from, const backends::CrashReport& crash, std::function<void()> release);
  void continued(backends::Backend* from, std::int64_t threadId, bool allThreads);
  void threadChanged(backends::Backend* from, std::int64_t threadId, bool started);
  void breakpointChanged(backends::Backend* from, const backends::BreakpointReport& state);
  void breakpointPlaced(backends::Backend* from, backends::Owner heldOwner, std::int64_t heldId,
                        const backends::BreakpointReport& placed);
  // A composite backend's parts (BackendHost::partAdded): their ids route to them; gone, void.
  void partAdded(backends::Backend* part) { parts_.insert(part); }
  void partGone(backends::Backend* part);
  bool isPart(const backends::Backend* part) const { return parts_.count(part) > 0; }
  void moduleChanged(const backends::ModuleInfo& module, const std::string& reason);
  void progress(const backends::ProgressReport& report);
  void gpuActivity(const backends::GpuActivityReport& report);

  // ---- ids: frames and variables live until their thread runs again, sources and breakpoints
  // for the session ----
  using Handles = HandleTable<backends::Backend>;
  Handles& frames() { return frames_; }
  Handles& variableRefs() { return variables_; }
  Handles& sources() { return sources_; }
  Handles& breakpointIds() { return breakpoints_; }
  // Which stop a reply's ids belong to: one thread's (0: no thread in particular), as it was when
  // the request was made. A reply that comes after that thread ran again hands out none of the
  // backend's frame ids or variables references: they belong to a stop that is over, and the
  // backend may already use their numbers for something else. Ids of one thread outlive the
  // runs and stops of others (a rank that stops leaves another rank's frames as they were);
  // those of no thread in particular go whenever anything runs.
  struct IdScope {
    std::int64_t thread = 0;
    std::uint64_t epoch = 0;
  };
  IdScope idScope(std::int64_t thread) const;
  bool current(const IdScope& scope) const { return idScope(scope.thread).epoch == scope.epoch; }
  // These threads run again (or stop anew): their ids are void, with those of no thread.
  void threadsRan(const std::set<std::int64_t>& threads);
  // The whole program runs again: every frame id and variables reference handed out is void.
  void programRan();
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
  bool sawStop() const { return stops_ > 0; }
  std::uint64_t stops() const { return stops_; }  // how many stops were reported
  // Launch/attach succeeded: a `capabilities` event with what the backend brings beyond
  // `initialize` (its exception filters among them), then `initialized`, so the client
  // configures breakpoints and filters knowing them.
  void backendStarted();
  // Breakpoints set before launch/attach (some clients send them first): kept, answered with
  // ids now, and placed once launch/attach has started the backend, each placement reported
  // as a `breakpoint` changed event under the id given first. Returns those ids.
  std::vector<std::int64_t> keepEarly(backends::BreakpointSet set);
  // Called by launch/attach right after the backend started (its requests queue until ready).
  void applyEarlyBreakpoints();

 private:
  class Port;
  // A backend and the host it reports through (the port outlives it).
  struct Held {
    std::unique_ptr<Port> port;
    std::unique_ptr<backends::Backend> backend;
  };
  Held& hold(std::unique_ptr<Port> port, std::unique_ptr<backends::Backend> backend);
  std::unique_ptr<Port> newPort();
  void setDebugger(backends::Backend* debugger, bool launched);

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
  std::vector<Held> backends_;
  backends::Backend* debugger_ = nullptr;
  backends::Backend* takenOver_ = nullptr;  // the debugger a post-mortem one took over from (crashed)
  backends::Backend* gpu_ = nullptr;
  std::map<std::int64_t, backends::Backend*> threadOwners_;
  std::set<std::string> progress_;  // ids of progress started and not yet ended
  std::unique_ptr<asio::thread_pool> worker_;  // made on the first offload
  std::shared_ptr<std::atomic<bool>> cancelWork_ = std::make_shared<std::atomic<bool>>(false);
  Handles frames_, variables_, sources_, breakpoints_;
  std::uint64_t anyRan_ = 0, programRan_ = 0;        // IdScope epochs: of no thread, of every thread
  std::map<std::int64_t, std::uint64_t> threadRan_;  // ...and of each thread besides
  backends::BreakpointBook early_;  // the breakpoints set before there was a backend
  void placeHeld(backends::Backend* heldOwner, backends::Backend* from, std::int64_t heldId,
                 const backends::BreakpointReport& placed);
  std::set<const backends::Backend*> parts_;
  RunState run_;
  std::uint64_t stops_ = 0;
  bool launchedDebuggee_ = false;
  SourceMap sourceMap_;  // the launch's or attach's sourceMap
  std::string coreOnCrash_;  // the launch's coreOnCrash: a post-mortem debugger writes the core there
  bool debuggeeEnded_ = false;
  std::int64_t processId_ = 0;
  bool ended_ = false;
};

}  // namespace strata::adapter
