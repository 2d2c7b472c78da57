// The Python backend in the adapter: starts the program under the in-target agent (or dials
// an agent that listens), forwards requests over the link and reports the agent's events.
#pragma once

#include <boost/asio.hpp>

#include <memory>
#include <optional>

#include "backends/python/proxy/agent_process.hpp"
#include "backends/backend.hpp"
#include "backends/process/process_backend.hpp"
#include "backends/python/proxy/agent_link.hpp"
#include "backends/python/proxy/child_sessions.hpp"
#include "backends/python/proxy/crash_watch.hpp"
#include "strata/protocol/transport.hpp"

namespace strata::backends {

// Where the agent package (`strata/`) is: the build tree's, else one installed beside us.
std::string agentPythonPath(const std::string& adapterExecutable);

class PythonBackend final : public Backend, public AgentProcess, private ForwardingHost {
 public:
  PythonBackend(asio::io_context& io, BackendHost& host);
  ~PythonBackend() override;

  std::string name() const override { return "python"; }
  BackendFeatures features() const override;
  // What this backend can do, known before one exists (the initialize response needs it).
  static BackendFeatures staticFeatures();
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  // The launch with the program started by `start` (mixed mode: the native debugger runs it)
  // instead of the process runner; the agent's connection is awaited the same way.
  using Starter = std::function<void(const LaunchSpec& child, Reply<void> started)>;
  void launchWith(const LaunchSpec& spec, Starter start, Reply<void> reply);
  void attach(const AttachSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override;
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  void abandonStart() override;
  void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) override;
  void step(StepKind kind, const StepOptions& options, Reply<void> reply) override;
  void pause(std::int64_t threadId, Reply<void> reply) override;
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                  Reply<StackPage> reply) override;
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) override;
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  void setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                   Reply<ValueInfo> reply) override;
  void setExpression(const std::string& expression, const std::string& value,
                     std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) override;
  void completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) override;
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  void source(std::int64_t sourceReference, Reply<SourceContent> reply) override;
  void gpuCollector(const GpuCollectorCommand& command, Reply<std::string> reply) override;
  // An attach over a connection already accepted (a process of a distributed job that dialed
  // the ranks listener and was checked there).
  void adopt(asio::ip::tcp::socket socket, const AttachSpec& spec, Reply<void> reply);
  // More arguments for the attach request it sends (a peer that is itself a strata-dap, which
  // needs to know what to attach to).
  void setStartArguments(boost::json::object arguments) { startArguments_ = std::move(arguments); }
  void processFacts(Reply<ProcessFacts> reply) override;
  // The port an attach with `listen` waits on (0 when not listening).
  std::uint16_t listeningPort() const;

 private:
  // setBreakpoints, by the set's kind.
  void sendSources(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                   Reply<std::vector<BreakpointReport>> reply);
  void sendFunctions(const std::vector<FunctionBreakpointSpec>& breakpoints,
                     Reply<std::vector<BreakpointReport>> reply);
  void sendFilters(const std::vector<ExceptionFilterSpec>& filters,
                   Reply<std::vector<BreakpointReport>> reply);
  // A request of the agent's own (strataProcess), its body as the agent sent it.
  void agentRequest(const std::string& command, boost::json::value arguments, Reply<boost::json::value> reply);
  // ---- the host of the process runner underneath: passed on, but for its exit ----
  void exited(const ExitStatus& status) override;

  void onAccept(asio::ip::tcp::socket socket);
  void listenForAgent(const AttachSpec& spec, Reply<void> reply);
  void onAgentDialedIn(asio::ip::tcp::socket socket);
  void startLink(asio::ip::tcp::socket socket, const char* startCommand);
  void onAgentEvent(const std::string& event, const boost::json::value& body);
  void onLinkClosed();
  void strayConnectionClosed();
  void failStart(Error error);
  void started();
  void reportExit(const ExitStatus& status);
  template <class T, class Convert>
  void call(const char* command, boost::json::value args, Reply<T> reply, Convert convert);

  asio::io_context& io_;
  BackendHost& host_;
  std::unique_ptr<ProcessBackend> process_;
  std::unique_ptr<protocol::Listener> listener_;
  asio::steady_timer timer_;
  std::shared_ptr<AgentLink> link_;
  std::string token_;
  boost::json::object startArguments_;
  std::string attachToken_;  // attach: the STRATA-TOKEN line sent (connect) or required (listen)
  bool justMyCode_ = true, stopOnEntry_ = false;
  // Child processes as child sessions: asked for (subProcess), and where they dial, opened when
  // the agent is on this machine.
  bool subProcess_ = true;
  std::unique_ptr<ChildSessions> children_;
  // The agent's crash guard, where the host can take a crash over (a session on this machine).
  std::unique_ptr<CrashWatch> crashes_;
  bool listening_ = false;  // attach: waiting for a program to dial in, handshake not done
  std::string listenWhere_;
  std::uint64_t linkGeneration_ = 0;  // a closed stray link's callbacks are ignored
  bool attached_ = false;   // attach mode: the agent's exit events are the only ones we get
  bool detached_ = false;
  bool exitReported_ = false;
  Reply<void> starting_;    // launch/attach waiting for the agent
  bool startFailed_ = false;
  // Requests that came while the agent was still connecting (clients configure right after
  // sending launch); they go out, in order, once the link is up.
  std::vector<std::function<void()>> waiting_;
  std::optional<ExitStatus> pendingExit_;
  std::optional<std::int64_t> agentExitCode_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
