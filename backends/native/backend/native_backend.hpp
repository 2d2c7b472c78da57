// The native backend: NativeDebugger (ptrace engine + DWARF) behind the neutral Backend interface.
#pragma once

#include <boost/asio.hpp>

#include <chrono>
#include <map>
#include <memory>

#include "backends/backend.hpp"
#include "backends/native/backend/native_layer.hpp"
#include "strata/native/debugger/debugger.hpp"

namespace strata::backends {

namespace asio = boost::asio;

class NativeBackend final : public NativeLayer {
 public:
  NativeBackend(asio::io_context& io, BackendHost& host);
  ~NativeBackend() override;

  std::string name() const override { return "native"; }
  BackendFeatures features() const override;
  // What this backend can do, known before one exists (the initialize response needs it).
  static BackendFeatures staticFeatures();
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void attach(const AttachSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override;
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void setInstructionBreakpoints(const std::vector<InstructionBreakpointSpec>& breakpoints,
                                 Reply<std::vector<BreakpointReport>> reply) override;
  void dataBreakpointInfo(const DataBreakpointQuery& query, Reply<DataBreakpointTarget> reply) override;
  void setDataBreakpoints(const std::vector<DataBreakpointSpec>& breakpoints,
                          Reply<std::vector<BreakpointReport>> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
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
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  void signalInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  void readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                  Reply<MemoryContents> reply) override;
  void writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                   bool allowPartial, Reply<std::int64_t> reply) override;
  void disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) override;
  void modules(Reply<std::vector<ModuleInfo>> reply) override;
  void loadedSources(Reply<std::vector<SourceInfo>> reply) override;
  void stepInTargets(std::int64_t frameId, Reply<std::vector<StepInTargetInfo>> reply) override;
  // Mixed mode's (native_layer.hpp).
  void sampleStack(std::int64_t threadId, std::int64_t levels, std::function<void()> alsoWhileStopped,
                   Reply<std::vector<FrameInfo>> reply) override;
  void catchEntry(std::int64_t threadId, native::debugger::OwnCode own, std::uint64_t returnTo, std::uint64_t returnSp,
                  Reply<std::size_t> reply) override;
  void cancelEntryCatch(Reply<void> reply) override;
  void ownPlace(std::int64_t threadId, native::debugger::OwnCode own, Reply<native::debugger::OwnPlace> reply) override;
  void symbolAddress(const std::string& name, const std::string& modulePart, Reply<std::uint64_t> reply) override;
  void writeAddress(std::uint64_t address, std::vector<std::uint8_t> bytes, Reply<void> reply) override;

  // Waits (at most `limit`) until every native debugger given up by a backend is torn down:
  // for the adapter's exit. False when some are still going.
  static bool finishTeardowns(std::chrono::milliseconds limit);

  // Largest indexed page answered to a `variables` request without a count.
  static constexpr std::uint64_t kUnpagedLimit = 1000;

 private:
  // setBreakpoints, by the set's kind.
  void placeSources(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                    Reply<std::vector<BreakpointReport>> reply);
  void placeFunctions(const std::vector<FunctionBreakpointSpec>& breakpoints,
                      Reply<std::vector<BreakpointReport>> reply);
  void setFilters(const std::vector<ExceptionFilterSpec>& filters,
                  Reply<std::vector<BreakpointReport>> reply);
  struct Pipe;
  // A facade completion that runs `done` on the session thread (internal.hpp).
  template <class F>
  auto onSession(F done);
  void onStopped(const native::debugger::DebuggerStop& stop);
  void onExited(const native::engine::ExitEvent& exit);
  void onModule(const std::string& path, bool loaded);
  void readPipe(const std::shared_ptr<Pipe>& pipe);
  void maybeReportExit();
  // A variable as the model has it; its indexed children are counted for unpaged requests.
  ValueInfo toValue(const native::debugger::Variable& v);
  std::vector<FrameInfo> toFrames(const std::vector<native::debugger::FrameEntry>& entries);

  asio::io_context& io_;
  BackendHost& host_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<native::debugger::NativeDebugger> debugger_;
  pid_t pid_ = 0;
  bool launched_ = false, stopOnEntry_ = false, detached_ = false, ended_ = false;
  bool detachRequested_ = false;  // the program is to run on: its pipes are drained, not closed
  std::optional<ExitStatus> pendingExit_;
  std::vector<std::shared_ptr<Pipe>> pipes_;
  std::unique_ptr<asio::steady_timer> exitTimer_;
  std::map<int, std::string> breakpointKinds_;  // facade id -> stop reason for its hits
  std::map<std::int64_t, native::debugger::DebuggerStop> exceptions_;  // by thread
  std::map<std::int64_t, std::uint64_t> indexedCounts_;            // variables ref -> indexed children
  std::map<std::string, ModuleInfo> modules_;                      // by path, as announced
  std::map<std::string, bool> sourceHere_;                         // source path -> exists here
};

}  // namespace strata::backends
