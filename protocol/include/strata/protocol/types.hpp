// Typed arguments and bodies of the DAP requests and events Strata speaks. Field names keep
// the specification's camelCase so the JSON mapping can be checked by eye.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strata/protocol/json.hpp"

namespace strata::protocol {

// ---- initialize ---------------------------------------------------------------------------
struct InitializeRequestArguments {
  std::optional<std::string> clientID, clientName, adapterID, locale, pathFormat;
  std::optional<bool> linesStartAt1, columnsStartAt1, supportsVariableType, supportsVariablePaging,
      supportsRunInTerminalRequest, supportsMemoryReferences, supportsProgressReporting,
      supportsInvalidatedEvent, supportsMemoryEvent, supportsArgsCanBeInterpretedByShell,
      supportsStartDebuggingRequest, supportsANSIStyling;
};

struct ExceptionBreakpointsFilter {
  std::string filter;
  std::string label;
  std::optional<std::string> description;
  std::optional<bool> default_;  // JSON "default"
  std::optional<bool> supportsCondition;
  std::optional<std::string> conditionDescription;
};

struct Capabilities {
  std::optional<bool> supportsConfigurationDoneRequest, supportsFunctionBreakpoints,
      supportsConditionalBreakpoints, supportsHitConditionalBreakpoints,
      supportsEvaluateForHovers, supportsStepBack, supportsSetVariable, supportsRestartFrame,
      supportsGotoTargetsRequest, supportsStepInTargetsRequest, supportsCompletionsRequest,
      supportsModulesRequest, supportsRestartRequest, supportsExceptionOptions,
      supportsValueFormattingOptions, supportsExceptionInfoRequest, supportTerminateDebuggee,
      supportSuspendDebuggee, supportsDelayedStackTraceLoading, supportsLoadedSourcesRequest,
      supportsLogPoints, supportsTerminateThreadsRequest, supportsSetExpression,
      supportsTerminateRequest, supportsDataBreakpoints, supportsReadMemoryRequest,
      supportsWriteMemoryRequest, supportsDisassembleRequest, supportsCancelRequest,
      supportsBreakpointLocationsRequest, supportsClipboardContext, supportsSteppingGranularity,
      supportsInstructionBreakpoints, supportsExceptionFilterOptions,
      supportsSingleThreadExecutionRequests, supportsANSIStyling;
  std::optional<std::vector<ExceptionBreakpointsFilter>> exceptionBreakpointFilters;
  // Characters after which the client asks for completions unprompted (VS Code's default: '.').
  std::optional<std::vector<std::string>> completionTriggerCharacters;
  // Strata's additions (DESIGN.md, "Custom DAP surface").
  std::optional<bool> supportsGpuTimeline, supportsParallelStacks;
};

// ---- launch / attach ------------------------------------------------------------------------
// Strata's launch configuration (debugpy's and lldb-dap's vocabulary).
struct LaunchRequestArguments {
  std::optional<bool> noDebug;
  std::optional<std::string> program;
  std::optional<std::string> module;  // python -m
  std::vector<std::string> args;
  std::optional<std::string> cwd;
  // null values unset a variable of the adapter's environment.
  std::map<std::string, std::optional<std::string>> env;
  std::optional<bool> stopOnEntry;
  std::optional<std::string> console;  // internalConsole | integratedTerminal | externalTerminal
  json::value python;  // interpreter path, or [path, flags...]
  std::optional<bool> justMyCode;
  json::value __restart;
  // A recorded GPU trace to open with no program (Kineto JSON, Nsight Systems SQLite, a Strata store).
  std::optional<std::string> trace;
  // The session's GPU store file (kept after the session); absent: a new temporary file.
  std::optional<std::string> gpuStore;
  // GPU collection in the launched program: "off" (the collector loaded, collecting nothing
  // until gpuStart), "trace", "stacks" (with the launching lines); absent: none.
  std::optional<std::string> gpu;
  // A Python launch debugged in both layers: the agent and the native debugger (mixed mode).
  std::optional<bool> native;
  // A distributed job: the program is a launcher (mpirun, torchrun, a script that spawns ranks);
  // every Python process it starts is debugged in this session (ranks.md).
  std::optional<bool> ranks;
  std::optional<std::vector<std::int64_t>> rankFilter;  // breakpoints only in these ranks
  std::optional<bool> stopAll;  // a stop in one rank stops every rank (default true)
  // Python: the child processes (fork, spawn, forkserver, subprocess) as child sessions (default true).
  std::optional<bool> subProcess;
  // Where the ranks dial the adapter (default 127.0.0.1): an address other machines reach, for
  // ranks there; they send the launch's token first.
  std::optional<std::string> ranksAddress;
  // A core file to open as a stopped process (program: its executable, optional when the core
  // names one that is readable); sysroot: the root its files are read under (a container's).
  std::optional<std::string> coreFile;
  std::optional<std::string> sysroot;
  // A folder where the program's core is written when it crashes (the stop at the crash).
  std::optional<std::string> coreOnCrash;
  // Where the files the debuggee names are on this side: [[debuggee prefix, local prefix], ...]
  // or {debuggee: local} (adapter/source_map.hpp).
  json::value sourceMap;
  // Native programs: what becomes of the program if strata-dap goes away without a disconnect
  // (killed, its connection lost): "terminate" (default: SIGTERM, then SIGKILL) or "detach"
  // (runs on, every breakpoint out).
  std::optional<std::string> onDisconnect;
};

struct DisconnectArguments {
  std::optional<bool> restart, terminateDebuggee, suspendDebuggee;
};
struct TerminateArguments {
  std::optional<bool> restart;
};
struct CancelArguments {
  std::optional<std::int64_t> requestId;
  std::optional<std::string> progressId;
};

// ---- runInTerminal (reverse request) --------------------------------------------------------
struct RunInTerminalRequestArguments {
  std::optional<std::string> kind;  // integrated | external
  std::optional<std::string> title;
  std::string cwd;
  std::vector<std::string> args;
  std::map<std::string, std::optional<std::string>> env;
  std::optional<bool> argsCanBeInterpretedByShell;
};
struct RunInTerminalResponseBody {
  std::optional<std::int64_t> processId, shellProcessId;
};

// ---- breakpoints ----------------------------------------------------------------------------
struct Source {
  std::optional<std::string> name, path;
  std::optional<std::int64_t> sourceReference;
  std::optional<std::string> presentationHint, origin;
  json::value adapterData;
};
struct SourceBreakpoint {
  std::int64_t line = 0;
  std::optional<std::int64_t> column;
  std::optional<std::string> condition, hitCondition, logMessage, mode;
};
struct SetBreakpointsArguments {
  Source source;
  std::optional<std::vector<SourceBreakpoint>> breakpoints;
  std::optional<std::vector<std::int64_t>> lines;
  std::optional<bool> sourceModified;
};
struct FunctionBreakpoint {
  std::string name;
  std::optional<std::string> condition, hitCondition;
};
struct SetFunctionBreakpointsArguments {
  std::vector<FunctionBreakpoint> breakpoints;
};
struct ExceptionFilterOptions {
  std::string filterId;
  std::optional<std::string> condition, mode;
};
struct SetExceptionBreakpointsArguments {
  std::vector<std::string> filters;
  std::optional<std::vector<ExceptionFilterOptions>> filterOptions;
  json::value exceptionOptions;
};
struct Breakpoint {
  std::optional<std::int64_t> id;
  bool verified = false;
  std::optional<std::string> message;
  std::optional<Source> source;
  std::optional<std::int64_t> line, column, endLine, endColumn;
  std::optional<std::string> instructionReference, reason;
};
struct BreakpointsBody {
  std::vector<Breakpoint> breakpoints;
};

// ---- threads --------------------------------------------------------------------------------
struct Thread {
  std::int64_t id = 0;
  std::string name;
};
struct ThreadsBody {
  std::vector<Thread> threads;
};

// ---- events ---------------------------------------------------------------------------------
struct OutputEventBody {
  std::optional<std::string> category;
  std::string output;
  std::optional<std::string> group;
  std::optional<std::int64_t> variablesReference;
  std::optional<Source> source;
  std::optional<std::int64_t> line, column;
  json::value data;
};
struct ExitedEventBody {
  std::int64_t exitCode = 0;
};
struct TerminatedEventBody {
  json::value restart;
};
struct ProcessEventBody {
  std::string name;
  std::optional<std::int64_t> systemProcessId;
  std::optional<bool> isLocalProcess;
  std::optional<std::string> startMethod;  // launch | attach | attachForSuspendedLaunch
  std::optional<std::int64_t> pointerSize;
};
struct CapabilitiesEventBody {
  Capabilities capabilities;
};

#define STRATA_PROTOCOL_STRUCT(T)                                                  \
  void tag_invoke(const json::value_from_tag&, json::value& jv, const T& v);       \
  void tag_invoke(decode_tag, Reader& r, T& v);

STRATA_PROTOCOL_STRUCT(InitializeRequestArguments)
STRATA_PROTOCOL_STRUCT(ExceptionBreakpointsFilter)
STRATA_PROTOCOL_STRUCT(Capabilities)
STRATA_PROTOCOL_STRUCT(LaunchRequestArguments)
STRATA_PROTOCOL_STRUCT(DisconnectArguments)
STRATA_PROTOCOL_STRUCT(TerminateArguments)
STRATA_PROTOCOL_STRUCT(CancelArguments)
STRATA_PROTOCOL_STRUCT(RunInTerminalRequestArguments)
STRATA_PROTOCOL_STRUCT(RunInTerminalResponseBody)
STRATA_PROTOCOL_STRUCT(Source)
STRATA_PROTOCOL_STRUCT(SourceBreakpoint)
STRATA_PROTOCOL_STRUCT(SetBreakpointsArguments)
STRATA_PROTOCOL_STRUCT(FunctionBreakpoint)
STRATA_PROTOCOL_STRUCT(SetFunctionBreakpointsArguments)
STRATA_PROTOCOL_STRUCT(ExceptionFilterOptions)
STRATA_PROTOCOL_STRUCT(SetExceptionBreakpointsArguments)
STRATA_PROTOCOL_STRUCT(Breakpoint)
STRATA_PROTOCOL_STRUCT(BreakpointsBody)
STRATA_PROTOCOL_STRUCT(Thread)
STRATA_PROTOCOL_STRUCT(ThreadsBody)
STRATA_PROTOCOL_STRUCT(OutputEventBody)
STRATA_PROTOCOL_STRUCT(ExitedEventBody)
STRATA_PROTOCOL_STRUCT(TerminatedEventBody)
STRATA_PROTOCOL_STRUCT(ProcessEventBody)
STRATA_PROTOCOL_STRUCT(CapabilitiesEventBody)

#undef STRATA_PROTOCOL_STRUCT

}  // namespace strata::protocol
