// Neutral types the backends speak: no DAP structs here, so a backend never depends on the
// protocol layer and the session owns the translation.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "strata/result.hpp"

namespace strata::backends {

class Backend;
// The part of a composite backend (mixed, ranks, attach by pid) whose ids a report carries:
// the session files each id under it and sends the requests that name the id straight there.
// Null: the backend that made the report.
using Owner = Backend*;

template <class T>
using Reply = std::function<void(Result<T>)>;

enum class Console { Internal, IntegratedTerminal, ExternalTerminal };

// A launch after the adapter resolved it: argv[0] is an absolute executable path.
struct LaunchSpec {
  std::vector<std::string> argv;
  std::string displayName;         // what the user named: program path or module
  std::string cwd;                 // absolute, exists
  std::vector<std::string> environment;  // "NAME=value", complete
  bool noDebug = true;
  bool stopOnEntry = false;
  bool justMyCode = true;
  // For Python: the interpreter with its flags, and what it runs (the file or "-m", module);
  // argv is interpreter + target + args.
  std::vector<std::string> interpreter;
  Console console = Console::Internal;
  enum class Language { Native, Python } language = Language::Native;
  // Python with the native debugger too (mixed mode): one session on both layers.
  bool native = false;
  // A distributed job (launch {"ranks": true}): argv is a launcher; every Python process it
  // starts is debugged, the ranks in this session, their other children as child sessions.
  bool ranks = false;
  std::vector<std::int64_t> rankFilter;  // breakpoints only in these ranks (empty: every rank)
  bool stopAll = true;                   // a stop in one rank stops the others
  std::string ranksAddress;              // where the ranks dial the adapter (empty: 127.0.0.1)
  // Python: every Python process started under the program gets a child session of its own
  // (startDebugging); the ranks of a job offer their children so whatever this says.
  bool subProcess = true;
  // A core file opened as a stopped process (launch {"coreFile"}): argv[0], when given, is the
  // executable; sysroot the root the core's files are read under.
  std::string coreFile;
  std::string sysroot;
  // A folder: at a crash stop the program's core is written there (core.PID) before it goes on.
  std::string coreOnCrash;
  // Native: the program is let run on (true) or terminated when strata-dap goes away unannounced.
  bool detachOnDisconnect = false;
};

// Late GPU collection inside the running program (gpuStart/gpuStop): load Strata's collector
// (`collector`, a path) and start it with `config` (strata_gpu_start's text), or stop it.
struct GpuCollectorCommand {
  bool start = true;
  std::string collector;
  std::string config;
};

enum class OutputCategory { Stdout, Stderr, Console, Important };

struct ExitStatus {
  int exitCode = 0;
  std::optional<int> signal;  // set when the debuggee died by a signal
  // False when another waiter in the adapter reaped the process first (the native debugger that
  // took a crashed program over): the status is that waiter's to say.
  bool known = true;
};

// A fatal signal in a program whose debugger cannot stop there itself (a Python session: its
// agent's crash guard told the adapter), caught before the program dies.
struct CrashReport {
  std::int64_t pid = 0;
  std::int64_t threadId = 0;  // the thread that crashed
  int signal = 0;
  int code = 0;               // si_code: > 0 a fault, <= 0 sent (kill, raise, abort)
  std::uint64_t address = 0;  // si_addr: the faulting address
  std::string coreOnCrash;    // the launch's folder for the core at the crash (empty: none)
};

// Human name of a signal: "SIGSEGV".
std::string signalName(int signo);

struct ThreadInfo {
  std::int64_t id = 0;  // OS thread id
  std::string name;
};

struct SourceBreakpointSpec {
  std::int64_t line = 0;
  std::optional<std::int64_t> column;
  std::optional<std::string> condition, hitCondition, logMessage;
};

struct BreakpointReport {
  bool verified = false;
  std::optional<std::int64_t> line;  // where it was actually placed
  std::string message;               // why it is not verified
  std::optional<std::int64_t> id;    // backend-local; the session makes it global
  std::optional<std::string> path;   // set on changes reported later (breakpointChanged)
  bool pending = false;              // unverified only until code for it loads
  Owner owner = nullptr;             // whose id `id` is
};

struct FunctionBreakpointSpec {
  std::string name;
  std::optional<std::string> condition, hitCondition;
};

// One exception filter a backend offers (raised, uncaught, ...) and one the client chose.
struct ExceptionFilter {
  std::string filter, label, description;
  bool enabledByDefault = false;
  bool supportsCondition = false;
  std::string conditionDescription;
};
struct ExceptionFilterSpec {
  std::string filterId;
  std::optional<std::string> condition;
};

// One breakpoint request as the client last sent it: all the breakpoints of one source, all the
// function breakpoints, or the exception filters. A new set replaces the last of its kind (and
// path); a backend answers one report per entry.
struct BreakpointSet {
  enum class Kind { Source, Function, Exception } kind = Kind::Source;
  std::string path;  // Source
  std::vector<SourceBreakpointSpec> sources;
  std::vector<FunctionBreakpointSpec> functions;
  std::vector<ExceptionFilterSpec> filters;
  std::vector<std::int64_t> ids;  // a breakpoint book's, one per entry (BreakpointBook::keep)

  static BreakpointSet source(std::string path, std::vector<SourceBreakpointSpec> specs);
  static BreakpointSet function(std::vector<FunctionBreakpointSpec> specs);
  static BreakpointSet exception(std::vector<ExceptionFilterSpec> filters);
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  std::string key() const;  // "source:PATH", "function", "exception"
  BreakpointSet emptied() const;  // the same kind and path, no entries
};

// What a backend can do, turned into DAP capabilities by the session.
struct BackendFeatures {
  bool conditionalBreakpoints = false, hitConditionalBreakpoints = false, logPoints = false,
       functionBreakpoints = false, evaluateForHovers = false, setVariable = false,
       setExpression = false, completions = false, exceptionInfo = false,
       delayedStackTraceLoading = false, clipboardContext = false, singleThreadExecution = false,
       steppingGranularity = false;
  bool dataBreakpoints = false, instructionBreakpoints = false, readMemory = false, writeMemory = false,
       disassemble = false, modules = false, stepInTargets = false, loadedSources = false;
  bool gpuTimeline = false;  // the custom GPU requests (gpuSummary, gpuTimeline, gpuKernel, gpuExport)
  // A step runs only the stepping thread's process, whatever singleThread says; the backend
  // reports that process's other threads as continued (the ranks of a job with stopAll false).
  bool processesRunApart = false;
  std::vector<ExceptionFilter> exceptionFilters;
};

// Long work the user waits on (a trace import), shown as DAP progress when the client can.
struct ProgressReport {
  enum class Phase { Start, Update, End } phase = Phase::Start;
  std::string id;                 // the same for a Start, its Updates and its End
  std::string title, message;     // title: Start only
  std::optional<int> percentage;  // 0-100, when known
};

// New GPU data in the session's store: what the gpuActivity event says.
struct GpuActivityReport {
  std::uint64_t records = 0, kernels = 0, copies = 0;
  std::uint64_t startNs = 0, endNs = 0;  // the time span of every timed record
  std::uint64_t dropped = 0;             // records the collector lost
};

// ---- execution control ----------------------------------------------------------------------
enum class StepKind { Over, In, Out };
enum class Granularity { Statement, Line, Instruction };
struct StepOptions {
  std::int64_t threadId = 0;
  Granularity granularity = Granularity::Statement;
  bool singleThread = false;
  std::optional<std::int64_t> targetId;  // stepIn: one of stepInTargets' ids
};

// A stop the backend reports. Ids inside are backend-local.
struct StopReport {
  std::string reason;  // breakpoint, step, exception, pause, entry, function breakpoint, ...
  std::optional<std::int64_t> threadId;
  std::string description, text;
  std::vector<std::int64_t> hitBreakpointIds;
  bool allThreadsStopped = true;
  // With allThreadsStopped false: other threads this stop holds too (the rest of one rank's
  // threads, when the other ranks run on).
  std::vector<std::int64_t> alsoStopped;
  Owner breakpointsOwner = nullptr;  // whose ids hitBreakpointIds are
};

// ---- inspection -------------------------------------------------------------------------------
// A source as a backend names it: a path, or a backend-local reference for code without a file.
struct SourceInfo {
  std::string name;
  std::optional<std::string> path;
  std::int64_t reference = 0;  // 0: none
  std::string presentationHint;
  Owner owner = nullptr;  // whose reference; null: the frame's owner
};
struct FrameInfo {
  std::int64_t id = 0;  // backend-local, valid until the next resume
  std::string name;
  std::uint64_t cfa = 0;  // native: the canonical frame address (mixed stacks match on it); 0: none
  std::optional<SourceInfo> source;
  std::int64_t line = 0, column = 0;
  std::string presentationHint;  // normal, label, subtle
  std::string instructionPointerReference;  // a memory reference ("0x401136"); empty: none
  std::string moduleId;
  Owner owner = nullptr;  // who answers for this frame (scopes, evaluate in it, step-in targets)
};
struct StackPage {
  std::vector<FrameInfo> frames;
  std::optional<std::int64_t> totalFrames;
};
struct ScopeInfo {
  std::string name, presentationHint;  // hint: arguments, locals, registers, ...
  std::int64_t variablesReference = 0;  // backend-local
  std::optional<std::int64_t> namedVariables, indexedVariables;
  bool expensive = false;
};
struct ValueHint {
  std::string kind, visibility;
  std::vector<std::string> attributes;
  bool lazy = false;
};
// A value shown to the user: a variable, an evaluation result, a value just assigned.
struct ValueInfo {
  std::string name;  // empty for evaluation results
  std::string value, type, evaluateName;
  std::int64_t variablesReference = 0;  // backend-local; 0: no children
  std::optional<std::int64_t> namedVariables, indexedVariables;
  std::optional<ValueHint> hint;
  std::string memoryReference;  // where the value (or what a pointer points to) lives; empty: none
  Owner owner = nullptr;  // whose variablesReference
};
struct VariablesQuery {
  std::int64_t variablesReference = 0;  // backend-local
  std::string filter;                    // "", indexed, named
  std::int64_t start = 0, count = 0;     // count 0: all
};
struct EvaluateQuery {
  std::string expression;
  std::optional<std::int64_t> frameId;  // backend-local
  std::string context;                  // watch, repl, hover, clipboard, variables
};
struct CompletionsQuery {
  std::string text;
  std::int64_t column = 1, line = 1;
  std::optional<std::int64_t> frameId;  // backend-local
};
struct CompletionEntry {
  std::string label, text, type;
  std::optional<std::int64_t> start, length;
};
struct ExceptionInfo {
  std::string exceptionId, description, breakMode, typeName, fullTypeName, message, stackTrace;
};
struct SourceContent {
  std::string content, mimeType;
};

// ---- native: memory, disassembly, data and instruction breakpoints, modules ---------------------
// Memory references are the backend's text ("0x7ffd1234"); the session passes them through.
struct InstructionBreakpointSpec {
  std::string instructionReference;
  std::int64_t offset = 0;
  std::optional<std::string> condition, hitCondition;
};
// dataBreakpointInfo: a child `name` of a variables reference (backend-local), or an expression
// in a frame (backend-local; absent: the stopped thread's top frame), or an address.
struct DataBreakpointQuery {
  std::optional<std::int64_t> variablesReference, frameId, bytes;
  std::string name;
  bool asAddress = false;
};
struct DataBreakpointTarget {
  std::optional<std::string> dataId;  // none: cannot be watched (description says why)
  std::string description;
  std::vector<std::string> accessTypes;  // read, write, readWrite
};
struct DataBreakpointSpec {
  std::string dataId, accessType;
  std::optional<std::string> condition, hitCondition;
};
struct MemoryContents {
  std::string address;  // where the data starts
  std::vector<std::uint8_t> data;
  std::int64_t unreadableBytes = 0;
};
struct DisassembleQuery {
  std::string memoryReference;
  std::int64_t offset = 0, instructionOffset = 0, instructionCount = 0;
  bool resolveSymbols = false;
};
struct InstructionInfo {
  std::string address, bytes, instruction, symbol, presentationHint;
  std::optional<SourceInfo> location;
  std::optional<std::int64_t> line;
};
struct ModuleInfo {
  std::string id, name, path, symbolStatus, addressRange;
};
struct StepInTargetInfo {
  std::int64_t id = 0;
  std::string label;
  std::optional<std::int64_t> line;
};

// Attach to a process by pid (native), or to a debuggee that waits for a debugger (an agent listening on host:port).
struct AttachSpec {
  std::optional<std::int64_t> processId;  // native attach (PTRACE_SEIZE)
  bool native = false;  // with a CPython processId: mixed mode (the agent, then the native debugger)
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  bool justMyCode = true;
  bool stopOnEntry = false;
  bool subProcess = true;  // Python: child processes as child sessions (launch's subProcess)
  // Listen on host:port for the program to dial in (python -m strata --connect) instead.
  bool listen = false;
  std::string token;  // sent first (connect) or required first (listen); needed off loopback
  int timeoutSeconds = 30;
  // The ranks of a job: these pids, or every CPython process under processTree (itself included).
  std::vector<std::int64_t> processIds;
  std::optional<std::int64_t> processTree;
  std::vector<std::int64_t> rankFilter;
  bool stopAll = true;
  std::string coreOnCrash;  // native and mixed: a folder for the core at a crash stop
  // Ranks on other machines: each node's strata-dap --listen attaches to its processes there.
  struct Node {
    std::string host;
    std::uint16_t port = 0;
    std::string token;
    std::vector<std::int64_t> processIds;
    std::optional<std::int64_t> processTree;
  };
  std::vector<Node> nodes;
};

// runInTerminal as the backend needs it; the session turns it into the reverse request.
struct TerminalLaunch {
  Console console = Console::IntegratedTerminal;
  std::string title;
  std::string cwd;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
};
struct TerminalProcess {
  std::optional<std::int64_t> processId, shellProcessId;
};

}  // namespace strata::backends
