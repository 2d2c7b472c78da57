// Typed arguments and bodies of the requests and events that inspect and control a stopped
// debuggee (stepping, stacks, variables, evaluation). Spec camelCase, like types.hpp.
#pragma once

#include "strata/protocol/types.hpp"

namespace strata::protocol {

// ---- attach ---------------------------------------------------------------------------------
struct ConnectTarget {
  std::optional<std::string> host;
  std::optional<std::int64_t> port;
};
// A node of a distributed job attached through the strata-dap --listen running there.
struct RankNode {
  std::optional<std::string> host;
  std::optional<std::int64_t> port;
  std::optional<std::string> token;
  std::optional<std::vector<std::int64_t>> processIds;
  std::optional<std::int64_t> processTree;
};
struct AttachRequestArguments {
  std::optional<ConnectTarget> connect;
  std::optional<std::string> host;  // debugpy's older spelling, beside connect
  std::optional<std::int64_t> port;
  std::optional<bool> justMyCode, stopOnEntry;
  json::value processId;  // native attach: a number, or a string of digits
  std::optional<bool> native;  // mixed mode (launch only, so far): refused with why
  json::value __restart;
  std::optional<ConnectTarget> listen;      // the adapter listens; the program dials in
  std::optional<std::string> token;         // required off loopback (STRATA-TOKEN line)
  std::optional<std::int64_t> timeout;      // seconds to wait for the program (listen)
  // The ranks of a distributed job: these processes, or every Python process under one.
  std::optional<std::vector<std::int64_t>> processIds;
  std::optional<std::int64_t> processTree;
  std::optional<std::vector<std::int64_t>> rankFilter;
  std::optional<bool> stopAll;
  std::optional<bool> subProcess;  // Python: child processes as child sessions (default true)
  std::optional<std::vector<RankNode>> nodes;  // ranks on other machines, each through its strata-dap
  json::value sourceMap;  // [[debuggee prefix, local prefix], ...] or {debuggee: local} (adapter/source_map.hpp)
};

// ---- execution control ----------------------------------------------------------------------
struct ContinueArguments {
  std::int64_t threadId = 0;
  std::optional<bool> singleThread;
};
struct ContinueResponseBody {
  std::optional<bool> allThreadsContinued;
};
// next, stepIn and stepOut share their arguments (stepIn adds targetId).
struct StepArguments {
  std::int64_t threadId = 0;
  std::optional<bool> singleThread;
  std::optional<std::int64_t> targetId;
  std::optional<std::string> granularity;  // statement | line | instruction
};
struct PauseArguments {
  std::int64_t threadId = 0;
};

// ---- stack, scopes, variables ---------------------------------------------------------------
struct StackTraceArguments {
  std::int64_t threadId = 0;
  std::optional<std::int64_t> startFrame, levels;
  json::value format;
};
struct StackFrame {
  std::int64_t id = 0;
  std::string name;
  std::optional<Source> source;
  std::int64_t line = 0, column = 0;
  std::optional<std::string> presentationHint;
  std::optional<std::string> instructionPointerReference, moduleId;
};
struct StackTraceBody {
  std::vector<StackFrame> stackFrames;
  std::optional<std::int64_t> totalFrames;
};
struct ScopesArguments {
  std::int64_t frameId = 0;
};
struct Scope {
  std::string name;
  std::optional<std::string> presentationHint;
  std::int64_t variablesReference = 0;
  std::optional<std::int64_t> namedVariables, indexedVariables;
  bool expensive = false;
};
struct ScopesBody {
  std::vector<Scope> scopes;
};
struct VariablesArguments {
  std::int64_t variablesReference = 0;
  std::optional<std::string> filter;  // indexed | named
  std::optional<std::int64_t> start, count;
  json::value format;
};
struct VariablePresentationHint {
  std::optional<std::string> kind;
  std::optional<std::vector<std::string>> attributes;
  std::optional<std::string> visibility;
  std::optional<bool> lazy;
};
struct Variable {
  std::string name, value;
  std::optional<std::string> type;
  std::optional<VariablePresentationHint> presentationHint;
  std::optional<std::string> evaluateName;
  std::int64_t variablesReference = 0;
  std::optional<std::int64_t> namedVariables, indexedVariables;
  std::optional<std::string> memoryReference;
};
struct VariablesBody {
  std::vector<Variable> variables;
};

// ---- evaluation -----------------------------------------------------------------------------
struct EvaluateArguments {
  std::string expression;
  std::optional<std::int64_t> frameId, line, column;
  std::optional<Source> source;
  std::optional<std::string> context;  // watch | repl | hover | clipboard | variables
  json::value format;
};
struct EvaluateResponseBody {
  std::string result;
  std::optional<std::string> type;
  std::optional<VariablePresentationHint> presentationHint;
  std::int64_t variablesReference = 0;
  std::optional<std::int64_t> namedVariables, indexedVariables;
  std::optional<std::string> memoryReference;
};
struct SetVariableArguments {
  std::int64_t variablesReference = 0;
  std::string name, value;
  json::value format;
};
struct SetExpressionArguments {
  std::string expression, value;
  std::optional<std::int64_t> frameId;
  json::value format;
};
// The body of setVariable and setExpression responses.
struct SetValueResponseBody {
  std::string value;
  std::optional<std::string> type;
  std::optional<VariablePresentationHint> presentationHint;
  std::optional<std::int64_t> variablesReference, namedVariables, indexedVariables;
};
struct CompletionsArguments {
  std::optional<std::int64_t> frameId;
  std::string text;
  std::int64_t column = 1;
  std::optional<std::int64_t> line;
};
struct CompletionItem {
  std::string label;
  std::optional<std::string> text, type;
  std::optional<std::int64_t> start, length;
};
struct CompletionsBody {
  std::vector<CompletionItem> targets;
};
struct ExceptionInfoArguments {
  std::int64_t threadId = 0;
};
struct ExceptionDetails {
  std::optional<std::string> message, typeName, fullTypeName, evaluateName, stackTrace;
};
struct ExceptionInfoResponseBody {
  std::string exceptionId;
  std::optional<std::string> description;
  std::string breakMode;  // never | always | unhandled | userUnhandled
  std::optional<ExceptionDetails> details;
};
struct SourceArguments {
  std::optional<Source> source;
  std::int64_t sourceReference = 0;
};
struct SourceResponseBody {
  std::string content;
  std::optional<std::string> mimeType;
};

// ---- events ---------------------------------------------------------------------------------
struct StoppedEventBody {
  std::string reason;
  std::optional<std::string> description;
  std::optional<std::int64_t> threadId;
  std::optional<bool> preserveFocusHint;
  std::optional<std::string> text;
  std::optional<bool> allThreadsStopped;
  std::optional<std::vector<std::int64_t>> hitBreakpointIds;
};
struct ContinuedEventBody {
  std::int64_t threadId = 0;
  std::optional<bool> allThreadsContinued;
};
struct ThreadEventBody {
  std::string reason;  // started | exited
  std::int64_t threadId = 0;
};
struct BreakpointEventBody {
  std::string reason;  // changed | new | removed
  Breakpoint breakpoint;
};

// ---- native: data and instruction breakpoints, memory, disassembly, modules, step-in targets ----
struct DataBreakpointInfoArguments {
  std::optional<std::int64_t> variablesReference, frameId, bytes;
  std::string name;
  std::optional<bool> asAddress;
  std::optional<std::string> mode;
};
struct DataBreakpoint {
  std::string dataId;
  std::optional<std::string> accessType, condition, hitCondition;
};
struct SetDataBreakpointsArguments {
  std::vector<DataBreakpoint> breakpoints;
};
struct InstructionBreakpoint {
  std::string instructionReference;
  std::optional<std::int64_t> offset;
  std::optional<std::string> condition, hitCondition, mode;
};
struct SetInstructionBreakpointsArguments {
  std::vector<InstructionBreakpoint> breakpoints;
};
struct ReadMemoryArguments {
  std::string memoryReference;
  std::optional<std::int64_t> offset;
  std::int64_t count = 0;
};
struct WriteMemoryArguments {
  std::string memoryReference;
  std::optional<std::int64_t> offset;
  std::optional<bool> allowPartial;
  std::string data;
};
struct DisassembleArguments {
  std::string memoryReference;
  std::optional<std::int64_t> offset, instructionOffset;
  std::int64_t instructionCount = 0;
  std::optional<bool> resolveSymbols;
};
struct ModulesArguments {
  std::optional<std::int64_t> startModule, moduleCount;
};
struct StepInTargetsArguments {
  std::int64_t frameId = 0;
};

#define STRATA_DEBUG_STRUCT(T)                                                     \
  void tag_invoke(const json::value_from_tag&, json::value& jv, const T& v);       \
  void tag_invoke(decode_tag, Reader& r, T& v);

STRATA_DEBUG_STRUCT(ConnectTarget)
STRATA_DEBUG_STRUCT(RankNode)
STRATA_DEBUG_STRUCT(AttachRequestArguments)
STRATA_DEBUG_STRUCT(ContinueArguments)
STRATA_DEBUG_STRUCT(ContinueResponseBody)
STRATA_DEBUG_STRUCT(StepArguments)
STRATA_DEBUG_STRUCT(PauseArguments)
STRATA_DEBUG_STRUCT(StackTraceArguments)
STRATA_DEBUG_STRUCT(StackFrame)
STRATA_DEBUG_STRUCT(StackTraceBody)
STRATA_DEBUG_STRUCT(ScopesArguments)
STRATA_DEBUG_STRUCT(Scope)
STRATA_DEBUG_STRUCT(ScopesBody)
STRATA_DEBUG_STRUCT(VariablesArguments)
STRATA_DEBUG_STRUCT(VariablePresentationHint)
STRATA_DEBUG_STRUCT(Variable)
STRATA_DEBUG_STRUCT(VariablesBody)
STRATA_DEBUG_STRUCT(EvaluateArguments)
STRATA_DEBUG_STRUCT(EvaluateResponseBody)
STRATA_DEBUG_STRUCT(SetVariableArguments)
STRATA_DEBUG_STRUCT(SetExpressionArguments)
STRATA_DEBUG_STRUCT(SetValueResponseBody)
STRATA_DEBUG_STRUCT(CompletionsArguments)
STRATA_DEBUG_STRUCT(CompletionItem)
STRATA_DEBUG_STRUCT(CompletionsBody)
STRATA_DEBUG_STRUCT(ExceptionInfoArguments)
STRATA_DEBUG_STRUCT(ExceptionDetails)
STRATA_DEBUG_STRUCT(ExceptionInfoResponseBody)
STRATA_DEBUG_STRUCT(SourceArguments)
STRATA_DEBUG_STRUCT(SourceResponseBody)
STRATA_DEBUG_STRUCT(StoppedEventBody)
STRATA_DEBUG_STRUCT(ContinuedEventBody)
STRATA_DEBUG_STRUCT(ThreadEventBody)
STRATA_DEBUG_STRUCT(BreakpointEventBody)
STRATA_DEBUG_STRUCT(DataBreakpointInfoArguments)
STRATA_DEBUG_STRUCT(DataBreakpoint)
STRATA_DEBUG_STRUCT(SetDataBreakpointsArguments)
STRATA_DEBUG_STRUCT(InstructionBreakpoint)
STRATA_DEBUG_STRUCT(SetInstructionBreakpointsArguments)
STRATA_DEBUG_STRUCT(ReadMemoryArguments)
STRATA_DEBUG_STRUCT(WriteMemoryArguments)
STRATA_DEBUG_STRUCT(DisassembleArguments)
STRATA_DEBUG_STRUCT(ModulesArguments)
STRATA_DEBUG_STRUCT(StepInTargetsArguments)

#undef STRATA_DEBUG_STRUCT

}  // namespace strata::protocol
