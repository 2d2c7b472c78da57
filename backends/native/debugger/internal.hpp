// NativeDebugger's state: everything here is touched only on the engine thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "strata/native/debugger/debugger.hpp"
#include "strata/native/debugger/hit_rules.hpp"
#include "strata/native/symbols/disassembler.hpp"
#include "strata/native/symbols/expression.hpp"
#include "strata/native/symbols/module_map.hpp"
#include "strata/native/symbols/stack.hpp"
#include "strata/native/symbols/values.hpp"

namespace strata::native::debugger {

namespace sym = strata::native::symbols;

// Hands a result on exactly once: to the caller's `done` (on the engine thread) when it gave
// one, else to the future. If the work never ran (engine gone), says so instead of leaving the
// caller with a broken promise or a callback never called.
template <class T>
struct PromiseBox {
  explicit PromiseBox(Done<T> d) : done(std::move(d)) {}
  std::promise<Result<T>> promise;
  Done<T> done;
  bool set_ = false;
  void set(Result<T> r) {
    set_ = true;
    if (done) return std::exchange(done, {})(std::move(r));
    promise.set_value(std::move(r));
  }
  ~PromiseBox() {
    if (!set_) set(Error{errors::kEngineStopped, "the native debugger stopped before the request ran", true});
  }
};

struct UserBreakpoint {
  enum class Kind { Source, Function, Instruction } kind = Kind::Source;
  std::string requestedFile;
  int requestedLine = 0;
  std::string function;
  engine::HitRule rule;  // condition, hit condition, log message: what the engine is told
  std::shared_ptr<const CompiledRule> compiled;
  std::uint64_t hits = 0;
  BreakpointPlacement state;
  std::vector<engine::BreakpointId> sites;
  std::set<std::uint64_t> addresses;  // runtime addresses with a site
};

enum class StepKind { Over, In, Out, Instruction, InstructionOver, IntoTarget };
struct StepOperation {
  std::uint64_t callReturn = 0;  // InstructionOver on a call: the address after it
  pid_t tid = 0;
  StepKind kind = StepKind::Over;
  std::uint64_t callAddress = 0;  // IntoTarget: the call to enter
  bool atCall = false;            // IntoTarget: the call instruction is being stepped
  std::uint64_t cfa = 0;
  int line = 0;
  std::string file;
  bool inPrologue = false;
  bool throughPlt = false;  // stepIn runs to the function behind a PLT stub
  int rounds = 0;
};

struct FrameRef {
  pid_t tid = 0;
  sym::Frame frame;
  std::shared_ptr<const sym::FrameContext> context;  // made on first use
};

struct VariableHandle {
  enum class Kind { Locals, Globals, Registers, Children } kind = Kind::Children;
  int frameId = 0;
  sym::Value value;  // Children
};

struct DataWatch {
  int id = 0;
  int slot = -1;  // debug register
  DataBreakpoint spec;
  std::function<bool(std::uint64_t)> hitCondition;
  std::uint64_t hits = 0;
  std::vector<std::uint8_t> last;  // the bytes at the last stop, for "old -> new"
};

struct NativeDebugger::State : engine::EventSink {
  State(Callbacks cb, const std::string& engineProgram);
  ~State() override;

  template <class T, class F>
  std::future<Result<T>> onEngine(F fn, Done<T> done = {}) {
    auto box = std::make_shared<PromiseBox<T>>(std::move(done));
    auto future = box->promise.get_future();
    (void)engine->runOnEngineThread([this, box, fn = std::move(fn)]() mutable -> Result<void> {
      ++answering;
      auto result = fn();
      --answering;
      box->set(std::move(result));
      if (answering == 0) flushEvents();
      return {};
    });
    return future;
  }

  // Events raised while a request runs on the engine thread reach the callbacks after its
  // result, so a caller always has a request's answer before the events it caused (the stop
  // of a pause, the entry stop of configurationDone).
  int answering = 0;
  std::vector<std::function<void()>> heldEvents;
  void emit(std::function<void()> event) {
    if (answering > 0) return heldEvents.push_back(std::move(event));
    event();
  }
  void flushEvents() {
    for (auto& e : std::exchange(heldEvents, {})) e();
  }

  // EventSink (engine thread).
  void onStopped(const engine::EngineStop& event) override;
  void onExited(const engine::ExitEvent& event) override;
  void onThreadStarted(pid_t pid, pid_t tid) override;
  void onThreadExited(pid_t pid, pid_t tid) override;
  void onLibraries(const engine::LibraryEvent& event) override;
  void onBreakpointOutput(const std::string& text) override {
    if (callbacks.output) emit([this, text] { callbacks.output(text); });
  }

  // breakpoints.cpp
  Result<std::shared_ptr<UserBreakpoint>> makeBreakpoint(UserBreakpoint::Kind kind, const std::string& condition,
                                                         const std::string& hitCondition,
                                                         const std::string& logMessage);
  void resolve(UserBreakpoint& bp, const sym::Module& module);
  Result<void> addSite(const std::shared_ptr<UserBreakpoint>& bp, std::uint64_t address);
  void removeBreakpoint(UserBreakpoint& bp);
  bool shouldStop(UserBreakpoint& bp, const engine::HitContext& hit);
  std::vector<BreakpointPlacement> replace(std::vector<int>& owned, std::vector<std::shared_ptr<UserBreakpoint>> fresh);

  // stepping.cpp
  Result<void> startStep(pid_t tid, StepKind kind);
  bool continueStep(const engine::EngineStop& event);  // true: keeps stepping, no stop reported
  std::uint64_t frameCfa(const ThreadRegisters& regs);
  Result<engine::ReturnTarget> returnTarget(pid_t tid);
  std::optional<std::uint64_t> pltTarget(const sym::Module& module, std::uint64_t pc);

  // inspect.cpp
  Result<FramePage> stackPage(pid_t tid, std::size_t start, std::size_t levels);
  Result<std::shared_ptr<const sym::FrameContext>> frameContext(int frameId);
  Result<std::vector<Variable>> variablesOf(int ref, VariableFilter filter, std::uint64_t start, std::uint64_t count);
  Variable describe(const sym::Value& value, int frameId);
  Result<Variable> setVariableIn(int ref, const std::string& name, const std::string& text);
  Result<Variable> evaluateIn(const std::string& text, int frameId);
  Result<std::vector<DisassembledInstruction>> disassembleAt(std::uint64_t address, std::size_t count);
  void forgetStop();  // frame ids and variable references end at a resume

  void report(DebuggerStop info);
  // watchpoints.cpp: true when the stop is reported (a hit condition may say run on).
  bool describeWatchHit(const engine::EngineStop& event, DebuggerStop& info);
  Result<DataTarget> dataTargetIn(const std::shared_ptr<const sym::FrameContext>& frame, const std::string& text);
  Result<void> enterTarget(StepOperation& op, std::uint64_t pc);

  // gpu_errors.cpp: the hidden breakpoint on the collector's strata_gpu_error_stop.
  void watchGpuErrors(const sym::Module& module);
  void forgetGpuErrors(const std::string& path);  // unloaded; empty path: every one (exec, exit, detach)
  bool isGpuErrorSite(const engine::EngineStop& event) const;
  void describeGpuError(const engine::EngineStop& event, DebuggerStop& info);
  std::vector<sym::RawFrame> fromProgramCall(pid_t tid, std::vector<sym::RawFrame> raw) const;
  bool isCudaRuntimeFrame(const sym::RawFrame& frame) const;  // a CUDA runtime function or header line

  Callbacks callbacks;
  sym::SymbolCache cache;
  sym::ModuleMap modules{cache};
  std::unique_ptr<sym::RemoteUnwinder> unwinder;
  std::unique_ptr<sym::Disassembler> disassembler;

  std::atomic<bool> holding{false};  // launch/attach: keep the first stop to ourselves
  std::atomic<bool> attached{false};  // the process was attached to, not launched
  pid_t lastTid = 0;
  std::optional<StepOperation> step;

  int nextBreakpointId = 1;
  std::map<int, std::shared_ptr<UserBreakpoint>> breakpoints;
  std::unordered_map<engine::BreakpointId, int> siteOwner;
  std::map<std::string, std::vector<int>> sourceBreakpoints;  // by requested file
  std::vector<int> functionBreakpoints;
  std::vector<int> instructionBreakpoints;
  std::vector<DataWatch> watches;
  std::set<int> stopSignals;  // empty until set: every fault signal stops
  bool stopSignalsSet = false;
  void writeCrashCore(const engine::EngineStop& event);
  std::string coreDir;  // setCoreOnCrash: where a crash's core goes
  std::map<int, std::pair<pid_t, StepInTarget>> stepTargets;  // valid until the next resume
  bool gpuErrorStops = true;
  std::map<std::string, engine::BreakpointId> gpuErrorSites;  // by the collector's path
  std::map<pid_t, std::uint64_t> gpuCallers;  // this stop: stacks shown from the program's call
  int nextStepTarget = 1;

  // entry_catch.cpp (mixed mode): breakpoints for one thread at every own function's first line.
  std::vector<engine::BreakpointId> entryCatch;
  std::map<std::string, std::vector<std::uint64_t>> ownEntries;  // by module path: link-time addresses
  std::vector<std::uint64_t> ownEntriesOf(const sym::Module& module, const OwnCode& own);
  void dropEntryCatch();
  bool onlyEntryCatch(const engine::EngineStop& event) const;  // a hit of the catch alone

  std::map<pid_t, std::unique_ptr<sym::StackView>> stacks;
  std::map<std::pair<pid_t, std::size_t>, int> frameIds;
  std::map<int, FrameRef> frames;
  std::map<int, VariableHandle> handles;
  int nextFrameId = 1;
  int nextHandle = 1;

  std::unique_ptr<engine::EngineApi> engine;  // last: its thread calls into everything above
};

}  // namespace strata::native::debugger
