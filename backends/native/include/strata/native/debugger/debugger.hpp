// NativeDebugger: the ptrace engine and the symbols library joined into what a debug adapter needs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/native/engine/engine.hpp"
#include "strata/result.hpp"

namespace strata::native::debugger {

// Receives a request's result on the engine thread.
template <class T>
using Done = std::function<void(Result<T>)>;

// Where a user breakpoint was placed, or why it is not (yet): one id whatever number of
// addresses it resolved to.
struct BreakpointPlacement {
  int id = 0;
  bool verified = false;  // false while pending (no loaded object has its line or function)
  std::string file;       // source breakpoints: the file of the resolved line
  int line = 0;           // the line actually used (moved to the next line with code)
  std::uint64_t address = 0;  // first resolved address (instruction breakpoints: as given)
  std::string message;    // why it is unverified, or an error in its condition
};

struct SourceBreakpoint {
  int line = 0;
  std::string condition;     // expression; stops when non-zero
  std::string hitCondition;  // "N" (the N-th hit only), ">=N", ">N", "%N", "==N"
  std::string logMessage;    // "x={x}": printed through onOutput, never stops
};

struct FunctionBreakpoint {
  std::string name;
  std::string condition;
  std::string hitCondition;
};

struct InstructionBreakpoint {
  std::uint64_t address = 0;
  std::string condition;
  std::string hitCondition;
};

enum class DebuggerStopReason { Entry, Breakpoint, Step, Pause, Exception, Attach, DataBreakpoint };
const char* stopReasonName(DebuggerStopReason reason);

// A sticky CUDA error the collector (libstrata_cupti.so) reported by calling its
// strata_gpu_error_stop: the StrataGpuError it passed, read from the target's memory.
struct GpuErrorStop {
  std::string api;         // "cudaDeviceSynchronize"
  std::string error;       // "cudaErrorIllegalAddress"
  int result = 0;          // 700
  std::uint32_t domain = 0;  // 1 driver API, 2 runtime API
  std::uint32_t cbid = 0;
  std::uint32_t threadId = 0;
  std::string lastKernel;  // demangled; empty when the thread launched none
  std::uint32_t lastCorrelation = 0;
  std::uint32_t lastSite = 0;
  std::uint64_t callerPc = 0;  // the program's call (the frame shown on top)
  std::string message;     // the collector's sentence, the kernel's name demangled
};

struct DebuggerStop {
  DebuggerStopReason reason = DebuggerStopReason::Pause;
  pid_t tid = 0;
  std::vector<int> hitBreakpointIds;
  std::string description;  // exceptions: "SIGSEGV: address not mapped to object at 0x0"
  int signal = 0;
  int signalCode = 0;              // si_code of an exception
  std::uint64_t faultAddress = 0;  // si_addr of an exception
  std::uint64_t pc = 0;
  std::optional<GpuErrorStop> gpuError;  // an Exception stop for a CUDA error, not a signal
};

struct ModuleEntry {
  std::string path;
  std::string name;
  std::uint64_t low = 0, high = 0;
  bool hasDebugInfo = false;
};

// Called on the engine thread. A callback may call NativeDebugger methods (they run at once),
// but must not block on anything the engine thread would have to do later.
// The exit and the thread list are the engine's own (engine::ExitEvent, engine::ThreadEntry).
struct Callbacks {
  std::function<void(const DebuggerStop&)> stopped;
  std::function<void(const engine::ExitEvent&)> exited;
  std::function<void(const BreakpointPlacement&)> breakpointChanged;  // e.g. a pending one verified
  std::function<void(const std::string&)> output;                     // log points, one line each
  std::function<void(pid_t tid, bool started)> thread;
  std::function<void(const ModuleEntry& module, bool loaded)> module;  // removed: path and name only
};

struct FrameEntry {
  int id = 0;  // valid until the next resume
  std::string name;
  std::string file;  // empty without line info
  int line = 0;
  int column = 0;
  std::string module;
  std::uint64_t moduleOffset = 0;  // pc minus the module's load bias
  std::uint64_t pc = 0;
  std::uint64_t cfa = 0;  // canonical frame address (the caller's sp at the call); 0 when unknown
  bool hasDebugInfo = false;
  bool inlined = false;
};

struct FramePage {
  std::vector<FrameEntry> frames;
  std::size_t totalFrames = 0;
};

struct Scope {
  std::string name;  // Locals, Globals, Registers
  int variablesReference = 0;
  bool expensive = false;
};

struct Variable {
  std::string name;
  std::string value;
  std::string type;
  std::string evaluateName;
  int variablesReference = 0;  // 0: no children
  std::uint64_t namedChildren = 0;
  std::uint64_t indexedChildren = 0;
  std::optional<std::uint64_t> memoryReference;
};

enum class VariableFilter { All, Named, Indexed };
enum class StepGranularity { Line, Instruction };

// A hardware data breakpoint (watchpoint): 1, 2, 4 or 8 bytes, aligned to their size.
struct DataBreakpoint {
  std::uint64_t address = 0;
  std::uint32_t size = 0;
  bool readWrite = false;   // false: writes only
  std::string description;  // what the stop names: "counter" or "pt.x"
  std::string hitCondition;
};

// Where an lvalue lives, for a data breakpoint on it.
struct DataTarget {
  std::uint64_t address = 0;
  std::uint32_t size = 0;
  std::string name;         // the expression it came from
  std::string description;  // "pt.x (int, 4 bytes at 0x...)"
};


// A call on the current line that stepInto can enter.
struct StepInTarget {
  int id = 0;              // valid until the next resume
  std::string label;       // the called function's name
  std::uint64_t callAddress = 0;
  std::uint64_t targetAddress = 0;
  int line = 0;
};

// Which code is the program's own, for stepping that crosses into it from outside (mixed mode:
// a Python step into a C++ extension): a module by its path, a function by the source file of
// its first line. Both must be given.
struct OwnCode {
  std::function<bool(const std::string& modulePath)> module;
  std::function<bool(const std::string& sourceFile)> file;
};

// Where a stopped thread is, for mixed mode's steps: its pc, whether that is in own code and,
// when it is not but its caller is (a step from own code into library code), where that call
// returns to (0: no own caller) and the stack pointer there.
struct OwnPlace {
  bool own = false;
  std::uint64_t pc = 0;
  std::uint64_t ownReturn = 0, ownReturnSp = 0;
};

struct DisassembledInstruction {
  std::uint64_t address = 0;
  std::string bytes;        // hex, space separated
  std::string instruction;  // "mov rax, qword ptr [rbp - 8]"
  std::string symbol;
  std::string file;
  int line = 0;
};

// Thread-safe: every method may be called from any thread; the engine thread does the work and
// hands the result to `done`, on the engine thread, in the order things happened there (so a
// caller that posts results and events onward keeps that order), or, without `done`, to the
// returned future. All symbol state lives on that thread, so no method takes a lock around it.
// Frame ids and variable references are valid until the next resume.
class NativeDebugger {
 public:
  // With no engineProgram the ptrace engine is a thread of this process. With one (strata-engine,
  // see locateEngine) it runs in a process of its own that holds ptrace: when this process dies
  // unannounced, that engine takes every breakpoint out and detaches (an attached program runs
  // on as if never debugged; a launched one follows its LaunchOptions::onDisconnect).
  explicit NativeDebugger(Callbacks callbacks, std::string engineProgram = {});
  ~NativeDebugger();  // kills a launched process, detaches an attached one
  NativeDebugger(const NativeDebugger&) = delete;
  NativeDebugger& operator=(const NativeDebugger&) = delete;

  // The process is held at its first instruction, no event sent, until configurationDone():
  // set breakpoints in between.
  std::future<Result<pid_t>> launch(engine::LaunchOptions options, Done<pid_t> done = {});
  // Every thread stopped (no event) until configurationDone().
  std::future<Result<void>> attach(pid_t pid, Done<void> done = {});
  // stopOnEntry: report a stop (Entry after launch, Attach after attach) instead of running.
  std::future<Result<void>> configurationDone(bool stopOnEntry, Done<void> done = {});
  // Every breakpoint removed; the program runs on without a tracer.
  std::future<Result<void>> detach(Done<void> done = {});
  std::future<Result<void>> terminate(Done<void> done = {});

  // Replaces the breakpoints of `file`; one state per request, in order.
  std::future<Result<std::vector<BreakpointPlacement>>> setSourceBreakpoints(std::string file,
                                                                             std::vector<SourceBreakpoint> breakpoints, Done<std::vector<BreakpointPlacement>> done = {});
  std::future<Result<std::vector<BreakpointPlacement>>> setFunctionBreakpoints(std::vector<FunctionBreakpoint> breakpoints, Done<std::vector<BreakpointPlacement>> done = {});
  std::future<Result<std::vector<BreakpointPlacement>>> setInstructionBreakpoints(
      std::vector<InstructionBreakpoint> breakpoints, Done<std::vector<BreakpointPlacement>> done = {});

  std::future<Result<void>> resume(Done<void> done = {});
  std::future<Result<void>> pause(Done<void> done = {});
  std::future<Result<void>> next(pid_t tid, StepGranularity granularity = StepGranularity::Line, Done<void> done = {});
  std::future<Result<void>> stepIn(pid_t tid, StepGranularity granularity = StepGranularity::Line, Done<void> done = {});
  std::future<Result<void>> stepOut(pid_t tid, Done<void> done = {});

  std::future<Result<std::vector<engine::ThreadEntry>>> threads(Done<std::vector<engine::ThreadEntry>> done = {});
  std::future<Result<FramePage>> stackTrace(pid_t tid, std::size_t startFrame, std::size_t levels, Done<FramePage> done = {});
  // The stack of one thread while the program runs (mixed mode: a thread another debugger
  // layer holds): every thread stopped for a moment, `alsoWhileStopped` run then (on the
  // engine thread), all let go. The frames have no ids: nothing in them can be inspected later.
  std::future<Result<FramePage>> sampleStack(pid_t tid, std::size_t levels, std::function<void()> alsoWhileStopped,
                                             Done<FramePage> done = {});
  std::future<Result<std::vector<Scope>>> scopes(int frameId, Done<std::vector<Scope>> done = {});
  std::future<Result<std::vector<Variable>>> variables(int variablesReference, VariableFilter filter = VariableFilter::All,
                                                       std::uint64_t start = 0, std::uint64_t count = 0, Done<std::vector<Variable>> done = {});
  // frameId 0: the stopped thread's top frame.
  std::future<Result<Variable>> evaluate(std::string expression, int frameId, Done<Variable> done = {});
  std::future<Result<Variable>> setVariable(int variablesReference, std::string name, std::string value, Done<Variable> done = {});
  std::future<Result<std::vector<std::uint8_t>>> readMemory(std::uint64_t address, std::size_t size, Done<std::vector<std::uint8_t>> done = {});
  std::future<Result<void>> writeMemory(std::uint64_t address, std::vector<std::uint8_t> bytes, Done<void> done = {});
  std::future<Result<std::vector<DisassembledInstruction>>> disassemble(std::uint64_t address, std::size_t count, Done<std::vector<DisassembledInstruction>> done = {});
  // Exactly `count` instructions starting `instructionOffset` instructions from `address` (negative:
  // before it, found by decoding from the function's start); unreadable places are "??" entries.
  std::future<Result<std::vector<DisassembledInstruction>>> disassembleAround(std::uint64_t address,
                                                                             std::int64_t instructionOffset,
                                                                             std::size_t count, Done<std::vector<DisassembledInstruction>> done = {});
  // The readable prefix of [address, address+size): shorter when a page cannot be read.
  std::future<Result<std::vector<std::uint8_t>>> readMemoryPrefix(std::uint64_t address, std::size_t size, Done<std::vector<std::uint8_t>> done = {});

  // Data breakpoints: replaces them all (at most 4, the debug registers). A hit stops with
  // DebuggerStopReason::DataBreakpoint, its id in hitBreakpointIds and "name: old -> new" as description.
  std::future<Result<std::vector<BreakpointPlacement>>> setDataBreakpoints(std::vector<DataBreakpoint> breakpoints, Done<std::vector<BreakpointPlacement>> done = {});
  // An lvalue of 1, 2, 4 or 8 bytes: an expression in a frame (0: top of the stopped thread), or a
  // child `name` of a variables reference.
  std::future<Result<DataTarget>> dataTarget(std::string expression, int frameId, Done<DataTarget> done = {});
  std::future<Result<DataTarget>> dataTargetOfVariable(int variablesReference, std::string name, Done<DataTarget> done = {});

  // Which fault signals stop the program (default: all of SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT);
  // the others are delivered to it at once, as without a debugger.
  // At an exception stop (a fatal signal), write the program's core to DIR/core.PID first and
  // say so through Callbacks::output (its path, size and how long it took).
  std::future<Result<void>> setCoreOnCrash(std::string dir, Done<void> done = {});
  std::future<Result<void>> setStopSignals(std::vector<int> signals, Done<void> done = {});
  // Whether a sticky CUDA error stops (default: yes). Where libstrata_cupti.so is loaded, a
  // hidden breakpoint on its strata_gpu_error_stop makes the error an Exception stop whose
  // stack starts at the program's call; it is never a user breakpoint and goes with detach.
  std::future<Result<void>> setGpuErrorStops(bool on, Done<void> done = {});

  // Every loaded ELF object (the executable, ld.so, libraries).
  std::future<Result<std::vector<ModuleEntry>>> modules(Done<std::vector<ModuleEntry>> done = {});
  // The primary source file of every compilation unit of the loaded objects that exists on this
  // machine (absolute, normalized, sorted, at most `limit`).
  std::future<Result<std::vector<std::string>>> sourceFiles(std::size_t limit = 10000, Done<std::vector<std::string>> done = {});

  // Calls on the line of `frameId` (a frame of a stopped thread) after its pc, in address order.
  std::future<Result<std::vector<StepInTarget>>> stepInTargets(int frameId, Done<std::vector<StepInTarget>> done = {});
  // Runs `tid` to the call of target `targetId` and into the callee, past its prologue.
  std::future<Result<void>> stepInto(pid_t tid, int targetId, Done<void> done = {});

  // Mixed mode. Until the next stop of any kind (or cancelEntryCatch), thread `tid` stops, with
  // a Step stop, at the first line of the next function of `own` code it enters: breakpoints
  // for that thread alone at every such function of the modules loaded now. Answers how many.
  // `returnTo`, when not 0: also stop the thread at that address (with its stack pointer at
  // `returnSp`, unless 0): where the library code own code called returns to it, or where a
  // Python callback returns to the C++ code that called it.
  std::future<Result<std::size_t>> catchEntry(pid_t tid, OwnCode own, std::uint64_t returnTo = 0,
                                              std::uint64_t returnSp = 0, Done<std::size_t> done = {});
  std::future<Result<void>> cancelEntryCatch(Done<void> done = {});
  // Where thread `tid` (stopped) is: in `own` code (its pc in such a module, on a line of such
  // a file), or in code its own caller called.
  std::future<Result<OwnPlace>> ownPlace(pid_t tid, OwnCode own, Done<OwnPlace> done = {});
  // The runtime address of a data or function symbol in the ELF symbol tables of a loaded
  // module whose path contains `modulePart` (empty: any module); 0 when none has it.
  std::future<Result<std::uint64_t>> symbolAddress(std::string name, std::string modulePart, Done<std::uint64_t> done = {});

  pid_t pid() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// strata-engine for the program at `executable` (strata-dap, strata): $STRATA_ENGINE, else beside
// it, else in ../lib/strata/ of an installed tree. Empty when there is none.
std::string locateEngine(const std::string& executable);

}  // namespace strata::native::debugger
