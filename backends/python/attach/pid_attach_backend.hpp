// Attach by pid to a running CPython: a read-only session on the process's memory at once, then
// the agent brought in with no restart; once it dials back, every request goes to PythonBackend.
#pragma once

#include <boost/asio.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "backends/backend.hpp"
#include "backends/breakpoint_book.hpp"
#include "backends/python/attach/injector.hpp"
#include "backends/python/attach/snapshot.hpp"
#include "backends/python/proxy/python_backend.hpp"

namespace strata::backends {

class PidAttachBackend final : public Backend, public AgentProcess, private ForwardingHost {
 public:
  PidAttachBackend(asio::io_context& io, BackendHost& host);
  ~PidAttachBackend() override;

  // Whether an attach to `pid` is this backend's (the process runs CPython).
  static bool wants(std::int64_t pid);
  // Called once the agent is in (mixed mode attaches the native debugger then).
  void whenAgentIn(std::function<void()> hook) { agentInHook_ = std::move(hook); }
  // What the agent says of the process, once it is in (an error before).
  void processFacts(Reply<ProcessFacts> reply) override;
  // The rank in the process's environment at the last snapshot (RANK, OMPI_COMM_WORLD_RANK, ...).
  std::optional<std::int64_t> snapshotRank() const { return snap_.rank; }

  std::string name() const override { return "python"; }
  BackendFeatures features() const override { return PythonBackend::staticFeatures(); }
  // ---- starting and ending: attach only; until the agent is in, nothing of Strata runs in the
  // process, and a detach or terminate leaves none of it there ----
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void attach(const AttachSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  // ---- breakpoints: kept until the agent is in (kept_), then the agent's ----
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  // ---- the rest: answered from the snapshot (stacks and locals read from memory, no running)
  // until the agent is in, then by the agent ----
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels, Reply<StackPage> reply) override;
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) override;
  void source(std::int64_t sourceReference, Reply<SourceContent> reply) override;
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) override;
  void step(StepKind kind, const StepOptions& options, Reply<void> reply) override;
  void pause(std::int64_t threadId, Reply<void> reply) override;
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  void setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                   Reply<ValueInfo> reply) override;
  void setExpression(const std::string& expression, const std::string& value, std::optional<std::int64_t> frameId,
                     Reply<ValueInfo> reply) override;
  void completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) override;

 private:
  // ---- the host of the PythonBackend underneath: passed on (its ids are ours), but for ----
  void output(OutputCategory category, std::string text) override;
  void processStarted(const std::string&, std::int64_t, bool) override {}
  void exited(const ExitStatus& status) override;
  bool canRunInTerminal() const override { return false; }
  void runInTerminal(const TerminalLaunch&, Reply<TerminalProcess> reply) override {
    reply(Error{errors::kUnsupportedRequest, "not while attached", false});
  }
  bool canStartDebugging() const override { return false; }

  Result<void> refresh();  // a new snapshot
  void reportSnapshotStop();
  void startAgent();
  void onAgentIn();
  void explainWaiting();
  void removeScript();
  // A breakpoint set: to the agent once it is in, else kept (kept_) and answered as pending.
  void keepOrSend(BreakpointSet set, const std::string& why, Reply<std::vector<BreakpointReport>> reply);
  void watchExit();
  std::string readOnlyText() const;
  const python::attach::SnapshotFrame* frameOf(std::int64_t frameId) const;

  asio::io_context& io_;
  BackendHost& host_;
  std::int64_t pid_ = 0;
  int terminatedBy_ = 0;  // the signal a read-only terminate sent
  AttachSpec spec_;
  std::unique_ptr<python::remote::PyRemote> remote_;
  python::attach::ProcessSnapshot snap_;
  std::unique_ptr<PythonBackend> agent_;
  bool agentIn_ = false, configured_ = false, snapshotShown_ = false, ended_ = false;
  std::string readOnly_;  // why the agent is not in (empty while it is on its way)
  std::string token_;
  std::optional<python::attach::QueuedBootstrap> bootstrap_;  // what was queued, to cancel at detach
  bool remoteExec_ = false;  // 3.14+: bootstrap_ holds PEP 768 requests, not pending calls
  std::string scriptFile_;   // 3.14+: the bootstrap's file, as this process reaches it
  asio::steady_timer waitTimer_, exitTimer_;
  // Breakpoints the client set before the agent came in, sent to it when it does; their ids
  // are far from the agent's, which count from 1.
  BreakpointBook kept_{1000000};
  std::function<void()> agentInHook_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
