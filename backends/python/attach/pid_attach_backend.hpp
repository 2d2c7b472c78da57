// Attach by pid to a running CPython: a read-only session on the process's memory at once, then
// the agent brought in with no restart; once it dials back, every request goes to PythonBackend.
#pragma once

#include <boost/asio.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "backends/backend.hpp"
#include "backends/python/attach/injector.hpp"
#include "backends/python/attach/snapshot.hpp"
#include "backends/python/proxy/python_backend.hpp"

namespace strata::backends {

class PidAttachBackend final : public Backend, public AgentProcess, private BackendHost {
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
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void attach(const AttachSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override;
  void setSourceBreakpoints(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                            Reply<std::vector<BreakpointReport>> reply) override;
  void setFunctionBreakpoints(const std::vector<FunctionBreakpointSpec>& breakpoints,
                              Reply<std::vector<BreakpointReport>> reply) override;
  void setExceptionBreakpoints(const std::vector<ExceptionFilterSpec>& filters,
                               Reply<std::vector<BreakpointReport>> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) override;
  void step(StepKind kind, const StepOptions& options, Reply<void> reply) override;
  void pause(std::int64_t threadId, Reply<void> reply) override;
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels, Reply<StackPage> reply) override;
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) override;
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  void setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                   Reply<ValueInfo> reply) override;
  void setExpression(const std::string& expression, const std::string& value, std::optional<std::int64_t> frameId,
                     Reply<ValueInfo> reply) override;
  void completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) override;
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  void source(std::int64_t sourceReference, Reply<SourceContent> reply) override;

 private:
  // ---- BackendHost for the PythonBackend underneath: ids translated, the rest passed on ----
  void output(OutputCategory category, std::string text) override;
  void processStarted(const std::string&, std::int64_t, bool) override {}
  void exited(const ExitStatus& status) override;
  bool congested() const override { return host_.congested(); }
  void whenWritable(std::function<void()> resume) override { host_.whenWritable(std::move(resume)); }
  bool canRunInTerminal() const override { return false; }
  void runInTerminal(const TerminalLaunch&, Reply<TerminalProcess> reply) override {
    reply(Error{errors::kUnsupportedRequest, "not while attached", false});
  }
  const std::string& adapterExecutable() const override { return host_.adapterExecutable(); }
  void stopped(const StopReport& stop) override;
  void continued(std::int64_t threadId, bool allThreads) override { host_.continued(threadId, allThreads); }
  void threadChanged(std::int64_t threadId, bool started) override { host_.threadChanged(threadId, started); }
  void breakpointChanged(const BreakpointReport& state) override;

  Result<void> refresh();  // a new snapshot
  void reportSnapshotStop();
  void startAgent();
  void onAgentIn();
  void explainWaiting();
  void removeScript();
  std::vector<BreakpointReport> keptReports(std::size_t count, std::vector<std::int64_t>& ids);
  void watchExit();
  std::string readOnlyText() const;
  const python::attach::SnapshotFrame* frameOf(std::int64_t frameId) const;
  Reply<std::vector<BreakpointReport>> mapped(Reply<std::vector<BreakpointReport>> reply,
                                              std::vector<std::int64_t> ids, std::optional<std::string> path);
  std::int64_t toOurs(std::int64_t agentId) const;

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
  // Breakpoints the client set before the agent came in, sent to it when it does.
  std::map<std::string, std::pair<std::vector<SourceBreakpointSpec>, std::vector<std::int64_t>>> sources_;
  std::optional<std::pair<std::vector<FunctionBreakpointSpec>, std::vector<std::int64_t>>> functions_;
  std::optional<std::pair<std::vector<ExceptionFilterSpec>, std::vector<std::int64_t>>> exceptions_;
  std::map<std::int64_t, std::int64_t> agentToOurs_;
  std::int64_t nextId_ = 1000000;  // ours: far from the agent's, which count from 1
  std::function<void()> agentInHook_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
