// Mixed mode: one Python program debugged in both layers at once — the agent for Python, the
// native debugger (which starts the interpreter and traces it) for C/C++ — as one backend.
#pragma once

#include <boost/asio.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "backends/backend.hpp"
#include "backends/breakpoint_book.hpp"
#include "backends/crash_diagnosis.hpp"
#include "backends/owned.hpp"
#include "backends/native/backend/native_layer.hpp"
#include "backends/python/attach/pid_attach_backend.hpp"
#include "backends/python/proxy/python_backend.hpp"
#include "strata/python/remote/py_remote.hpp"

namespace strata::backends {

// A Python frame read from memory as a stack frame: its file the source (a path when absolute).
FrameInfo pythonFrameInfo(const python::remote::PythonFrame& frame, std::int64_t id);
// libpython's own frames (the eval loop, calls through the C API): the Python frames they run
// stand for them in a merged stack.
bool interpreterModule(const std::string& moduleId);

class MixedBackend final : public Backend {
 public:
  MixedBackend(asio::io_context& io, BackendHost& host);
  ~MixedBackend() override;

  std::string name() const override { return "mixed"; }
  BackendFeatures features() const override;
  static BackendFeatures staticFeatures();
  // ---- starting and ending: the agent's side first, then the native debugger's ----
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void attach(const AttachSpec& spec, Reply<void> reply) override;
  // A Python program that crashed in a session without the native debugger (its agent's crash
  // guard holds the crashing thread): the native debugger attaches, then `release` lets the
  // signal happen again, and it stops there with every thread's merged stack, the Python frames
  // read from memory (mixed_attach.cpp).
  void attachAfterCrash(const CrashReport& crash, std::function<void()> release);
  void configurationDone(Reply<void> reply) override;
  void abandonStart() override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  // ---- breakpoints: each set to the layer it belongs to; reports owned by that layer ----
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void setInstructionBreakpoints(const std::vector<InstructionBreakpointSpec>& breakpoints,
                                 Reply<std::vector<BreakpointReport>> reply) override;
  void dataBreakpointInfo(const DataBreakpointQuery& query, Reply<DataBreakpointTarget> reply) override;
  void setDataBreakpoints(const std::vector<DataBreakpointSpec>& breakpoints,
                          Reply<std::vector<BreakpointReport>> reply) override;
  // ---- running: the layer that holds the stop; stacks merged across the boundary ----
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels, Reply<StackPage> reply) override;
  void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) override;
  void step(StepKind kind, const StepOptions& options, Reply<void> reply) override;
  void pause(std::int64_t threadId, Reply<void> reply) override;
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  // ---- a frame's values: a layer's frames go to that layer (their owner); what comes here
  // names a Python frame read from memory at a native stop (ours), or no frame at all ----
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) override;
  void setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                   Reply<ValueInfo> reply) override;
  void stepInTargets(std::int64_t frameId, Reply<std::vector<StepInTargetInfo>> reply) override;
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  void setExpression(const std::string& expression, const std::string& value, std::optional<std::int64_t> frameId,
                     Reply<ValueInfo> reply) override;
  void completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) override;
  // ---- native memory and code, and GPU collection: one layer's own ----
  void readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                  Reply<MemoryContents> reply) override;
  void writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                   bool allowPartial, Reply<std::int64_t> reply) override;
  void disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) override;
  void modules(Reply<std::vector<ModuleInfo>> reply) override;
  void loadedSources(Reply<std::vector<SourceInfo>> reply) override;
  void gpuCollector(const GpuCollectorCommand& command, Reply<std::string> reply) override;

  // The layers: each one's frames, variables, sources and breakpoints are its backend's (their
  // owner, to the session); the Python frames read from memory at a native stop are ours.
  enum Layer { kNative, kPython };

 private:
  class Side;
  friend class Side;
  // A Python frame read from memory at a native stop, and its locals.
  struct MemoryFrame {
    std::vector<python::remote::PyLocal> locals;
    bool localsRead = false;
    bool nativeSample = false;  // a native frame shown at a Python stop: no values
  };

  void onStopped(Layer from, const StopReport& stop);
  void reportStop(Layer from, const StopReport& stop);
  void onContinued(Layer from, std::int64_t threadId, bool allThreads);
  void onExited(const ExitStatus& status);
  void forgetNativeStop();
  void resumePython(std::int64_t threadId, bool singleThread, Reply<bool> reply);
  Result<const python::remote::PythonSnapshot*> pythonState();
  void mergedStack(std::int64_t threadId, Reply<std::vector<FrameInfo>> reply);
  void pythonStopStack(std::int64_t threadId, Reply<std::vector<FrameInfo>> reply);
  std::vector<FrameInfo> spliceNative(std::int64_t threadId, const std::vector<FrameInfo>& agent,
                                      std::vector<FrameInfo> native,
                                      const Result<python::remote::PythonSnapshot>& snap);
  bool agentFile(const std::string& path) const;
  // mixed_stepping.cpp: steps across the boundary.
  native::debugger::OwnCode ownCode() const;
  void setStepModes(std::vector<std::pair<std::int64_t, std::int64_t>> modes, Reply<void> reply);
  void dropArmedSteps(std::function<void()> then);
  bool stepRunsOn(const StopReport& stop);
  void armFromNative(std::int64_t tid, std::function<void(bool)> then);
  std::uint64_t ownCallerOfPython(std::int64_t tid) const;
  // mixed_attach.cpp: attach by pid, the native debugger once the agent is in; native
  // breakpoints set before then are held (pending) and sent then.
  void attachNative();
  BackendHost& pythonHost();  // the Python layer's host (Side is complete in mixed_backend.cpp)
  // Instruction and data breakpoints name native addresses, which only the native debugger
  // gives: before it is in, they are not set (and not held).
  std::vector<BreakpointReport> notYetNative(std::size_t count) const;
  // Native breakpoints: to the native debugger, or kept (heldNative_) until it is in.
  void nativeBreakpoints(BreakpointSet set, Reply<std::vector<BreakpointReport>> reply);
  // Function breakpoints and filters: asked of both layers, each entry answered by the one that has it.
  void functionBreakpoints(const std::vector<FunctionBreakpointSpec>& breakpoints, Reply<std::vector<BreakpointReport>> reply);
  void exceptionFilters(const std::vector<ExceptionFilterSpec>& filters, Reply<std::vector<BreakpointReport>> reply);
  // A continue or step sent to the agent lets its thread run; a native stop that comes before
  // the agent's answer freezes the agent with its answer unsent. Such a request is answered at
  // that stop (with `assumed`), before the stop is reported.
  template <class T>
  Reply<T> answeredAtNativeStop(Reply<T> done, Result<T> assumed);
  Layer stopLayerOf(std::int64_t threadId) const;
  Backend& owner(Layer layer);

  asio::io_context& io_;
  BackendHost& host_;
  std::unique_ptr<Side> pySide_, nativeSide_;
  std::unique_ptr<Backend> py_;  // PythonBackend (launch) or PidAttachBackend (attach)
  PythonBackend* pyLaunch_ = nullptr;
  std::unique_ptr<NativeLayer> native_;
  std::string agentDir_;
  std::string interpreter_;  // the ELF file the native debugger started
  // Threads with a Python step armed in the agent (a step that may end in either layer), the
  // agent's step table in the process (0: not looked up yet), and whether an entry catch is set.
  std::set<std::int64_t> pyStepArmed_;
  std::uint64_t stepTable_ = 0;
  bool entryCatchArmed_ = false;
  std::uint64_t pendingHook_ = 0;  // the agent core's strata_mixed_pending (0: not looked up)
  // A native step that went from own code into library code runs on to where that code returns
  // (or to Python, or to an own function): there, the step the user asked goes on.
  struct ReturnCatch {
    std::int64_t tid = 0;
    std::uint64_t pc = 0;
  };
  std::optional<ReturnCatch> returnCatch_;
  std::optional<std::pair<StepKind, StepOptions>> lastNativeStep_;
  std::map<std::uint64_t, std::function<void()>> releasing_;  // answers for a native stop
  std::uint64_t nextRelease_ = 1;
  int quietContinues_ = 0;  // native resumes of a step that runs on: the client saw no stop
  bool attaching_ = false;  // attach by pid: the agent first, then the native debugger
  bool nativeIn_ = true;    // false until an attach's native debugger is in
  BreakpointBook heldNative_{1000000};  // native breakpoints set before the native debugger is in
  std::int64_t pid_ = 0;
  bool exited_ = false;
  // The native debugger holds every thread (a native breakpoint, step, signal or pause).
  std::optional<StopReport> nativeStop_;
  // Threads the agent holds (a Python breakpoint, step or pause), with the stop it reported.
  std::map<std::int64_t, StopReport> pythonStops_;
  std::map<std::int64_t, std::string> pythonNames_;  // the agent's thread names, by OS tid
  // At a native stop: the Python state read from memory once, and merged stacks by thread.
  std::unique_ptr<python::remote::PyRemote> remote_;
  std::optional<python::remote::PythonSnapshot> pyState_;
  std::map<std::int64_t, std::vector<FrameInfo>> merged_;
  std::map<std::int64_t, std::vector<FrameInfo>> pyStacks_;  // at Python stops, by thread
  std::map<std::int64_t, MemoryFrame> memoryFrames_;  // by our local id
  std::int64_t nextMemoryId_ = 1;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
