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
  // Whether the client opens child sessions (the DAP startDebugging reverse request), and the
  // request: `configuration` is the child's launch or attach configuration as JSON text.
  virtual bool canStartDebugging() const { return false; }
  virtual void startDebugging(const std::string& request, const std::string& configuration, Reply<void> reply) {
    (void)request, (void)configuration;
    reply(Error{errors::kUnsupportedRequest, "this client does not open child sessions", false});
  }

  // Crashes: whether a debugger can take over a program that crashed (the session's, which
  // attaches a native debugger and stops at the fault), and the crash itself. The program waits
  // until `release` is called: then the signal happens again, under that debugger if one came
  // in. Hosts that see crashes themselves (mixed mode's native debugger) or cannot take them
  // over let it go at once.
  virtual bool takesCrashes() const { return false; }
  virtual void crashed(const CrashReport& crash, std::function<void()> release) {
    (void)crash;
    release();
  }

  // Debugging events; ids inside are the backend's own, the session maps them.
  virtual void stopped(const StopReport& stop) { (void)stop; }
  virtual void continued(std::int64_t threadId, bool allThreads) { (void)threadId, (void)allThreads; }
  virtual void threadChanged(std::int64_t threadId, bool started) { (void)threadId, (void)started; }
  virtual void breakpointChanged(const BreakpointReport& state) { (void)state; }
  // A breakpoint the client was given as `heldId` of `heldOwner` (null: this backend) while it
  // was kept is placed now: `placed` says where, under the id (and owner) it has from now on.
  virtual void breakpointPlaced(Owner heldOwner, std::int64_t heldId, const BreakpointReport& placed) {
    (void)heldOwner;
    BreakpointReport b = placed;
    b.id = heldId;
    b.owner = nullptr;
    breakpointChanged(b);
  }
  // A composite's part, whose ids the composite hands out with the part as their owner
  // (FrameInfo::owner and the rest): from partAdded until partGone the session sends the
  // requests that name those ids to the part itself, and partGone voids them.
  virtual void partAdded(Backend& part) { (void)part; }
  virtual void partGone(Backend& part) { (void)part; }
  // reason: new, changed, removed.
  virtual void moduleChanged(const ModuleInfo& module, const std::string& reason) { (void)module, (void)reason; }

  // Long work the user waits on (a trace import); shown only to clients that show progress.
  virtual void progress(const ProgressReport& report) { (void)report; }
  // New GPU data in the session's store (the gpuActivity event).
  virtual void gpuActivity(const GpuActivityReport& report) { (void)report; }
};

// A host that passes every report up to the host above it: what a composite backend gives each
// of its parts, overriding only what it changes on the way (mixed mode's layers, the ranks'
// members, attach by pid's agent).
class ForwardingHost : public BackendHost {
 public:
  explicit ForwardingHost(BackendHost& up) : up_(up) {}
  void output(OutputCategory category, std::string text) override { up_.output(category, std::move(text)); }
  void processStarted(const std::string& name, std::int64_t pid, bool launched) override {
    up_.processStarted(name, pid, launched);
  }
  void exited(const ExitStatus& status) override { up_.exited(status); }
  bool congested() const override { return up_.congested(); }
  void whenWritable(std::function<void()> resume) override { up_.whenWritable(std::move(resume)); }
  bool canRunInTerminal() const override { return up_.canRunInTerminal(); }
  void runInTerminal(const TerminalLaunch& launch, Reply<TerminalProcess> reply) override {
    up_.runInTerminal(launch, std::move(reply));
  }
  const std::string& adapterExecutable() const override { return up_.adapterExecutable(); }
  bool canStartDebugging() const override { return up_.canStartDebugging(); }
  void startDebugging(const std::string& request, const std::string& configuration, Reply<void> reply) override {
    up_.startDebugging(request, configuration, std::move(reply));
  }
  bool takesCrashes() const override { return up_.takesCrashes(); }
  void crashed(const CrashReport& crash, std::function<void()> release) override {
    up_.crashed(crash, std::move(release));
  }
  void stopped(const StopReport& stop) override { up_.stopped(stop); }
  void continued(std::int64_t threadId, bool allThreads) override { up_.continued(threadId, allThreads); }
  void threadChanged(std::int64_t threadId, bool started) override { up_.threadChanged(threadId, started); }
  void breakpointChanged(const BreakpointReport& state) override { up_.breakpointChanged(state); }
  void breakpointPlaced(Owner heldOwner, std::int64_t heldId, const BreakpointReport& placed) override {
    up_.breakpointPlaced(heldOwner, heldId, placed);
  }
  void partAdded(Backend& part) override { up_.partAdded(part); }
  void partGone(Backend& part) override { up_.partGone(part); }
  void moduleChanged(const ModuleInfo& module, const std::string& reason) override { up_.moduleChanged(module, reason); }
  void progress(const ProgressReport& report) override { up_.progress(report); }
  void gpuActivity(const GpuActivityReport& report) override { up_.gpuActivity(report); }

 protected:
  BackendHost& up_;
};

class GpuService;

template <class T>
void notSupported(const std::string& backend, const char* what, const Reply<T>& reply) {
  reply(Error{errors::kUnsupportedRequest, "the " + backend + " backend does not support " + what, false});
}

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  virtual void launch(const LaunchSpec& spec, Reply<void> reply) = 0;
  virtual void configurationDone(Reply<void> reply) = 0;
  // One breakpoint set, as the client last sent it (model.hpp): it replaces the last set of its
  // kind. A backend that has no function breakpoints or filters answers with unsupported().
  virtual void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) = 0;
  virtual void threads(Reply<std::vector<ThreadInfo>> reply) = 0;
  // Ends the debuggee (force: SIGKILL now; else a polite SIGTERM). exited() follows.
  virtual void terminate(bool force, Reply<void> reply) = 0;
  // Leaves the debuggee running as if it had never been debugged.
  virtual void detach(Reply<void> reply) = 0;
  // The client cancelled the launch or attach still in progress: stop waiting (for a terminal,
  // for a program to connect) and end what was started. Its reply may still come; it is dropped.
  virtual void abandonStart() {}

  // ---- debugging: a backend overrides what it can do; the rest answers "not supported" ----
  virtual BackendFeatures features() const { return {}; }
  virtual void attach(const AttachSpec& spec, Reply<void> reply) {
    (void)spec;
    notSupported(name(), "attach", reply);
  }
  // Replies whether all threads continued.
  virtual void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) {
    (void)threadId, (void)singleThread;
    notSupported(name(), "continue", reply);
  }
  virtual void step(StepKind kind, const StepOptions& options, Reply<void> reply) {
    (void)kind, (void)options;
    notSupported(name(), "stepping", reply);
  }
  virtual void pause(std::int64_t threadId, Reply<void> reply) {
    (void)threadId;
    notSupported(name(), "pause", reply);
  }
  virtual void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                          Reply<StackPage> reply) {
    (void)threadId, (void)startFrame, (void)levels;
    notSupported(name(), "stack traces", reply);
  }
  virtual void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
    (void)frameId;
    notSupported(name(), "scopes", reply);
  }
  virtual void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) {
    (void)query;
    notSupported(name(), "variables", reply);
  }
  virtual void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
    (void)query;
    notSupported(name(), "evaluate", reply);
  }
  virtual void setVariable(std::int64_t variablesReference, const std::string& name,
                           const std::string& value, Reply<ValueInfo> reply) {
    (void)variablesReference, (void)name, (void)value;
    notSupported(this->name(), "setting variables", reply);
  }
  virtual void setExpression(const std::string& expression, const std::string& value,
                             std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) {
    (void)expression, (void)value, (void)frameId;
    notSupported(name(), "setting expressions", reply);
  }
  virtual void completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) {
    (void)query;
    notSupported(name(), "completions", reply);
  }
  virtual void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
    (void)threadId;
    notSupported(name(), "exception info", reply);
  }
  virtual void source(std::int64_t sourceReference, Reply<SourceContent> reply) {
    (void)sourceReference;
    notSupported(name(), "source requests", reply);
  }
  virtual void setInstructionBreakpoints(const std::vector<InstructionBreakpointSpec>& breakpoints,
                                         Reply<std::vector<BreakpointReport>> reply) {
    if (breakpoints.empty()) return reply(std::vector<BreakpointReport>{});
    notSupported(name(), "instruction breakpoints", reply);
  }
  virtual void dataBreakpointInfo(const DataBreakpointQuery& query, Reply<DataBreakpointTarget> reply) {
    (void)query;
    reply(DataBreakpointTarget{std::nullopt, "the " + name() + " backend has no data breakpoints", {}});
  }
  virtual void setDataBreakpoints(const std::vector<DataBreakpointSpec>& breakpoints,
                                  Reply<std::vector<BreakpointReport>> reply) {
    if (breakpoints.empty()) return reply(std::vector<BreakpointReport>{});
    notSupported(name(), "data breakpoints", reply);
  }
  virtual void readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                          Reply<MemoryContents> reply) {
    (void)memoryReference, (void)offset, (void)count;
    notSupported(name(), "reading memory", reply);
  }
  // Replies the number of bytes written.
  virtual void writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                           bool allowPartial, Reply<std::int64_t> reply) {
    (void)memoryReference, (void)offset, (void)data, (void)allowPartial;
    notSupported(name(), "writing memory", reply);
  }
  virtual void disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) {
    (void)query;
    notSupported(name(), "disassembly", reply);
  }
  virtual void modules(Reply<std::vector<ModuleInfo>> reply) { notSupported(name(), "modules", reply); }
  virtual void loadedSources(Reply<std::vector<SourceInfo>> reply) { notSupported(name(), "loaded sources", reply); }
  virtual void stepInTargets(std::int64_t frameId, Reply<std::vector<StepInTargetInfo>> reply) {
    (void)frameId;
    notSupported(name(), "step-in targets", reply);
  }

  // What a backend answers for a breakpoint set it has no such breakpoints for: function
  // breakpoints "not supported"; no filters, none set; filters "not supported".
  void unsupported(const BreakpointSet& set, const Reply<std::vector<BreakpointReport>>& reply) const {
    if (set.kind == BreakpointSet::Kind::Function) return notSupported(name(), "function breakpoints", reply);
    if (set.empty()) return reply(std::vector<BreakpointReport>{});
    notSupported(name(), set.kind == BreakpointSet::Kind::Source ? "source breakpoints" : "exception breakpoints", reply);
  }

  // ---- optional services beside debugging (null: this backend has none) ----
  // GPU data: the custom GPU requests and the Debug Console's !gpu and !sql (backends/gpu.hpp).
  virtual GpuService* gpu() { return nullptr; }
  // Loads the GPU collector into the running program and starts or stops it; the reply is the
  // collector's status sentence (an error carries its reason).
  virtual void gpuCollector(const GpuCollectorCommand& command, Reply<std::string> reply) {
    (void)command;
    notSupported(name(), "starting or stopping GPU collection in a running program", reply);
  }
};

}  // namespace strata::backends
