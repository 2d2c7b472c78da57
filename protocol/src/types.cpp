// Field lists of the protocol structs: one list per struct drives both encoding and decoding,
// so the two directions cannot drift apart.
#include "strata/protocol/types.hpp"

#include "codec.hpp"

namespace strata::protocol {
using codec::Encoder;
using codec::Decoder;

// Both conversions of a struct, from its one field list.
#define STRATA_FIELDS_CODEC(T)                                                   \
  void tag_invoke(const json::value_from_tag&, json::value& jv, const T& v) { \
    json::object o;                                                       \
    Encoder e{o};                                                         \
    fieldsOf##T(e, v);                                                    \
    jv = std::move(o);                                                    \
  }                                                                       \
  void tag_invoke(decode_tag, Reader& r, T& v) {                          \
    Decoder d{r};                                                         \
    fieldsOf##T(d, v);                                                    \
  }

template <class V, class T>
static void fieldsOfInitializeRequestArguments(V& v, T& t) {
  v.field("clientID", t.clientID, false);
  v.field("clientName", t.clientName, false);
  v.field("adapterID", t.adapterID, false);
  v.field("locale", t.locale, false);
  v.field("pathFormat", t.pathFormat, false);
  v.field("linesStartAt1", t.linesStartAt1, false);
  v.field("columnsStartAt1", t.columnsStartAt1, false);
  v.field("supportsVariableType", t.supportsVariableType, false);
  v.field("supportsVariablePaging", t.supportsVariablePaging, false);
  v.field("supportsRunInTerminalRequest", t.supportsRunInTerminalRequest, false);
  v.field("supportsMemoryReferences", t.supportsMemoryReferences, false);
  v.field("supportsProgressReporting", t.supportsProgressReporting, false);
  v.field("supportsInvalidatedEvent", t.supportsInvalidatedEvent, false);
  v.field("supportsMemoryEvent", t.supportsMemoryEvent, false);
  v.field("supportsArgsCanBeInterpretedByShell", t.supportsArgsCanBeInterpretedByShell, false);
  v.field("supportsStartDebuggingRequest", t.supportsStartDebuggingRequest, false);
  v.field("supportsANSIStyling", t.supportsANSIStyling, false);
}
STRATA_FIELDS_CODEC(InitializeRequestArguments)

template <class V, class T>
static void fieldsOfExceptionBreakpointsFilter(V& v, T& t) {
  v.field("filter", t.filter, true);
  v.field("label", t.label, true);
  v.field("description", t.description, false);
  v.field("default", t.default_, false);
  v.field("supportsCondition", t.supportsCondition, false);
  v.field("conditionDescription", t.conditionDescription, false);
}
STRATA_FIELDS_CODEC(ExceptionBreakpointsFilter)

template <class V, class T>
static void fieldsOfCapabilities(V& v, T& t) {
  v.field("supportsConfigurationDoneRequest", t.supportsConfigurationDoneRequest, false);
  v.field("supportsFunctionBreakpoints", t.supportsFunctionBreakpoints, false);
  v.field("supportsConditionalBreakpoints", t.supportsConditionalBreakpoints, false);
  v.field("supportsHitConditionalBreakpoints", t.supportsHitConditionalBreakpoints, false);
  v.field("supportsEvaluateForHovers", t.supportsEvaluateForHovers, false);
  v.field("supportsStepBack", t.supportsStepBack, false);
  v.field("supportsSetVariable", t.supportsSetVariable, false);
  v.field("supportsRestartFrame", t.supportsRestartFrame, false);
  v.field("supportsGotoTargetsRequest", t.supportsGotoTargetsRequest, false);
  v.field("supportsStepInTargetsRequest", t.supportsStepInTargetsRequest, false);
  v.field("supportsCompletionsRequest", t.supportsCompletionsRequest, false);
  v.field("supportsModulesRequest", t.supportsModulesRequest, false);
  v.field("supportsRestartRequest", t.supportsRestartRequest, false);
  v.field("supportsExceptionOptions", t.supportsExceptionOptions, false);
  v.field("supportsValueFormattingOptions", t.supportsValueFormattingOptions, false);
  v.field("supportsExceptionInfoRequest", t.supportsExceptionInfoRequest, false);
  v.field("supportTerminateDebuggee", t.supportTerminateDebuggee, false);
  v.field("supportSuspendDebuggee", t.supportSuspendDebuggee, false);
  v.field("supportsDelayedStackTraceLoading", t.supportsDelayedStackTraceLoading, false);
  v.field("supportsLoadedSourcesRequest", t.supportsLoadedSourcesRequest, false);
  v.field("supportsLogPoints", t.supportsLogPoints, false);
  v.field("supportsTerminateThreadsRequest", t.supportsTerminateThreadsRequest, false);
  v.field("supportsSetExpression", t.supportsSetExpression, false);
  v.field("supportsTerminateRequest", t.supportsTerminateRequest, false);
  v.field("supportsDataBreakpoints", t.supportsDataBreakpoints, false);
  v.field("supportsReadMemoryRequest", t.supportsReadMemoryRequest, false);
  v.field("supportsWriteMemoryRequest", t.supportsWriteMemoryRequest, false);
  v.field("supportsDisassembleRequest", t.supportsDisassembleRequest, false);
  v.field("supportsCancelRequest", t.supportsCancelRequest, false);
  v.field("supportsBreakpointLocationsRequest", t.supportsBreakpointLocationsRequest, false);
  v.field("supportsClipboardContext", t.supportsClipboardContext, false);
  v.field("supportsSteppingGranularity", t.supportsSteppingGranularity, false);
  v.field("supportsInstructionBreakpoints", t.supportsInstructionBreakpoints, false);
  v.field("supportsExceptionFilterOptions", t.supportsExceptionFilterOptions, false);
  v.field("supportsSingleThreadExecutionRequests", t.supportsSingleThreadExecutionRequests, false);
  v.field("supportsANSIStyling", t.supportsANSIStyling, false);
  v.field("exceptionBreakpointFilters", t.exceptionBreakpointFilters, false);
  v.field("completionTriggerCharacters", t.completionTriggerCharacters, false);
  v.field("supportsGpuTimeline", t.supportsGpuTimeline, false);
  v.field("supportsParallelStacks", t.supportsParallelStacks, false);
}
STRATA_FIELDS_CODEC(Capabilities)

template <class V, class T>
static void fieldsOfLaunchRequestArguments(V& v, T& t) {
  v.field("noDebug", t.noDebug, false);
  v.field("program", t.program, false);
  v.field("module", t.module, false);
  v.field("args", t.args, false);
  v.field("cwd", t.cwd, false);
  v.field("env", t.env, false);
  v.field("stopOnEntry", t.stopOnEntry, false);
  v.field("console", t.console, false);
  v.field("python", t.python, false);
  v.field("justMyCode", t.justMyCode, false);
  v.field("__restart", t.__restart, false);
  v.field("trace", t.trace, false);
  v.field("gpuStore", t.gpuStore, false);
  v.field("gpu", t.gpu, false);
  v.field("native", t.native, false);
  v.field("ranks", t.ranks, false);
  v.field("rankFilter", t.rankFilter, false);
  v.field("stopAll", t.stopAll, false);
  v.field("subProcess", t.subProcess, false);
  v.field("ranksAddress", t.ranksAddress, false);
  v.field("coreFile", t.coreFile, false);
  v.field("sysroot", t.sysroot, false);
  v.field("coreOnCrash", t.coreOnCrash, false);
  v.field("sourceMap", t.sourceMap, false);
  v.field("onDisconnect", t.onDisconnect, false);
}
STRATA_FIELDS_CODEC(LaunchRequestArguments)

template <class V, class T>
static void fieldsOfDisconnectArguments(V& v, T& t) {
  v.field("restart", t.restart, false);
  v.field("terminateDebuggee", t.terminateDebuggee, false);
  v.field("suspendDebuggee", t.suspendDebuggee, false);
}
STRATA_FIELDS_CODEC(DisconnectArguments)

template <class V, class T>
static void fieldsOfTerminateArguments(V& v, T& t) {
  v.field("restart", t.restart, false);
}
STRATA_FIELDS_CODEC(TerminateArguments)

template <class V, class T>
static void fieldsOfCancelArguments(V& v, T& t) {
  v.field("requestId", t.requestId, false);
  v.field("progressId", t.progressId, false);
}
STRATA_FIELDS_CODEC(CancelArguments)

template <class V, class T>
static void fieldsOfRunInTerminalRequestArguments(V& v, T& t) {
  v.field("kind", t.kind, false);
  v.field("title", t.title, false);
  v.field("cwd", t.cwd, true);
  v.field("args", t.args, true);
  v.field("env", t.env, false);
  v.field("argsCanBeInterpretedByShell", t.argsCanBeInterpretedByShell, false);
}
STRATA_FIELDS_CODEC(RunInTerminalRequestArguments)

template <class V, class T>
static void fieldsOfRunInTerminalResponseBody(V& v, T& t) {
  v.field("processId", t.processId, false);
  v.field("shellProcessId", t.shellProcessId, false);
}
STRATA_FIELDS_CODEC(RunInTerminalResponseBody)

template <class V, class T>
static void fieldsOfSource(V& v, T& t) {
  v.field("name", t.name, false);
  v.field("path", t.path, false);
  v.field("sourceReference", t.sourceReference, false);
  v.field("presentationHint", t.presentationHint, false);
  v.field("origin", t.origin, false);
  v.field("adapterData", t.adapterData, false);
}
STRATA_FIELDS_CODEC(Source)

template <class V, class T>
static void fieldsOfSourceBreakpoint(V& v, T& t) {
  v.field("line", t.line, true);
  v.field("column", t.column, false);
  v.field("condition", t.condition, false);
  v.field("hitCondition", t.hitCondition, false);
  v.field("logMessage", t.logMessage, false);
  v.field("mode", t.mode, false);
}
STRATA_FIELDS_CODEC(SourceBreakpoint)

template <class V, class T>
static void fieldsOfSetBreakpointsArguments(V& v, T& t) {
  v.field("source", t.source, true);
  v.field("breakpoints", t.breakpoints, false);
  v.field("lines", t.lines, false);
  v.field("sourceModified", t.sourceModified, false);
}
STRATA_FIELDS_CODEC(SetBreakpointsArguments)

template <class V, class T>
static void fieldsOfFunctionBreakpoint(V& v, T& t) {
  v.field("name", t.name, true);
  v.field("condition", t.condition, false);
  v.field("hitCondition", t.hitCondition, false);
}
STRATA_FIELDS_CODEC(FunctionBreakpoint)

template <class V, class T>
static void fieldsOfSetFunctionBreakpointsArguments(V& v, T& t) {
  v.field("breakpoints", t.breakpoints, true);
}
STRATA_FIELDS_CODEC(SetFunctionBreakpointsArguments)

template <class V, class T>
static void fieldsOfExceptionFilterOptions(V& v, T& t) {
  v.field("filterId", t.filterId, true);
  v.field("condition", t.condition, false);
  v.field("mode", t.mode, false);
}
STRATA_FIELDS_CODEC(ExceptionFilterOptions)

template <class V, class T>
static void fieldsOfSetExceptionBreakpointsArguments(V& v, T& t) {
  v.field("filters", t.filters, true);
  v.field("filterOptions", t.filterOptions, false);
  v.field("exceptionOptions", t.exceptionOptions, false);
}
STRATA_FIELDS_CODEC(SetExceptionBreakpointsArguments)

template <class V, class T>
static void fieldsOfBreakpoint(V& v, T& t) {
  v.field("id", t.id, false);
  v.field("verified", t.verified, true);
  v.field("message", t.message, false);
  v.field("source", t.source, false);
  v.field("line", t.line, false);
  v.field("column", t.column, false);
  v.field("endLine", t.endLine, false);
  v.field("endColumn", t.endColumn, false);
  v.field("instructionReference", t.instructionReference, false);
  v.field("reason", t.reason, false);
}
STRATA_FIELDS_CODEC(Breakpoint)

template <class V, class T>
static void fieldsOfBreakpointsBody(V& v, T& t) {
  v.field("breakpoints", t.breakpoints, true);
}
STRATA_FIELDS_CODEC(BreakpointsBody)

template <class V, class T>
static void fieldsOfThread(V& v, T& t) {
  v.field("id", t.id, true);
  v.field("name", t.name, true);
}
STRATA_FIELDS_CODEC(Thread)

template <class V, class T>
static void fieldsOfThreadsBody(V& v, T& t) {
  v.field("threads", t.threads, true);
}
STRATA_FIELDS_CODEC(ThreadsBody)

template <class V, class T>
static void fieldsOfOutputEventBody(V& v, T& t) {
  v.field("category", t.category, false);
  v.field("output", t.output, true);
  v.field("group", t.group, false);
  v.field("variablesReference", t.variablesReference, false);
  v.field("source", t.source, false);
  v.field("line", t.line, false);
  v.field("column", t.column, false);
  v.field("data", t.data, false);
}
STRATA_FIELDS_CODEC(OutputEventBody)

template <class V, class T>
static void fieldsOfExitedEventBody(V& v, T& t) {
  v.field("exitCode", t.exitCode, true);
}
STRATA_FIELDS_CODEC(ExitedEventBody)

template <class V, class T>
static void fieldsOfTerminatedEventBody(V& v, T& t) {
  v.field("restart", t.restart, false);
}
STRATA_FIELDS_CODEC(TerminatedEventBody)

template <class V, class T>
static void fieldsOfProcessEventBody(V& v, T& t) {
  v.field("name", t.name, true);
  v.field("systemProcessId", t.systemProcessId, false);
  v.field("isLocalProcess", t.isLocalProcess, false);
  v.field("startMethod", t.startMethod, false);
  v.field("pointerSize", t.pointerSize, false);
}
STRATA_FIELDS_CODEC(ProcessEventBody)

template <class V, class T>
static void fieldsOfCapabilitiesEventBody(V& v, T& t) {
  v.field("capabilities", t.capabilities, true);
}
STRATA_FIELDS_CODEC(CapabilitiesEventBody)

}  // namespace strata::protocol
