// Field lists of the protocol structs: one list per struct drives both encoding and decoding,
// so the two directions cannot drift apart.
#include "strata/protocol/types.hpp"

#include "codec.hpp"

namespace strata::protocol {
using codec::Encoder;
using codec::Decoder;

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
void tag_invoke(const json::value_from_tag&, json::value& jv, const InitializeRequestArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfInitializeRequestArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, InitializeRequestArguments& v) {
  Decoder d{r};
  fieldsOfInitializeRequestArguments(d, v);
}

template <class V, class T>
static void fieldsOfExceptionBreakpointsFilter(V& v, T& t) {
  v.field("filter", t.filter, true);
  v.field("label", t.label, true);
  v.field("description", t.description, false);
  v.field("default", t.default_, false);
  v.field("supportsCondition", t.supportsCondition, false);
  v.field("conditionDescription", t.conditionDescription, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const ExceptionBreakpointsFilter& v) {
  json::object o;
  Encoder e{o};
  fieldsOfExceptionBreakpointsFilter(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, ExceptionBreakpointsFilter& v) {
  Decoder d{r};
  fieldsOfExceptionBreakpointsFilter(d, v);
}

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
  v.field("supportsGpuTimeline", t.supportsGpuTimeline, false);
  v.field("supportsParallelStacks", t.supportsParallelStacks, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const Capabilities& v) {
  json::object o;
  Encoder e{o};
  fieldsOfCapabilities(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, Capabilities& v) {
  Decoder d{r};
  fieldsOfCapabilities(d, v);
}

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
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const LaunchRequestArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfLaunchRequestArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, LaunchRequestArguments& v) {
  Decoder d{r};
  fieldsOfLaunchRequestArguments(d, v);
}

template <class V, class T>
static void fieldsOfDisconnectArguments(V& v, T& t) {
  v.field("restart", t.restart, false);
  v.field("terminateDebuggee", t.terminateDebuggee, false);
  v.field("suspendDebuggee", t.suspendDebuggee, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const DisconnectArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfDisconnectArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, DisconnectArguments& v) {
  Decoder d{r};
  fieldsOfDisconnectArguments(d, v);
}

template <class V, class T>
static void fieldsOfTerminateArguments(V& v, T& t) {
  v.field("restart", t.restart, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const TerminateArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfTerminateArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, TerminateArguments& v) {
  Decoder d{r};
  fieldsOfTerminateArguments(d, v);
}

template <class V, class T>
static void fieldsOfCancelArguments(V& v, T& t) {
  v.field("requestId", t.requestId, false);
  v.field("progressId", t.progressId, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const CancelArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfCancelArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, CancelArguments& v) {
  Decoder d{r};
  fieldsOfCancelArguments(d, v);
}

template <class V, class T>
static void fieldsOfRunInTerminalRequestArguments(V& v, T& t) {
  v.field("kind", t.kind, false);
  v.field("title", t.title, false);
  v.field("cwd", t.cwd, true);
  v.field("args", t.args, true);
  v.field("env", t.env, false);
  v.field("argsCanBeInterpretedByShell", t.argsCanBeInterpretedByShell, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const RunInTerminalRequestArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfRunInTerminalRequestArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, RunInTerminalRequestArguments& v) {
  Decoder d{r};
  fieldsOfRunInTerminalRequestArguments(d, v);
}

template <class V, class T>
static void fieldsOfRunInTerminalResponseBody(V& v, T& t) {
  v.field("processId", t.processId, false);
  v.field("shellProcessId", t.shellProcessId, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const RunInTerminalResponseBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfRunInTerminalResponseBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, RunInTerminalResponseBody& v) {
  Decoder d{r};
  fieldsOfRunInTerminalResponseBody(d, v);
}

template <class V, class T>
static void fieldsOfSource(V& v, T& t) {
  v.field("name", t.name, false);
  v.field("path", t.path, false);
  v.field("sourceReference", t.sourceReference, false);
  v.field("presentationHint", t.presentationHint, false);
  v.field("origin", t.origin, false);
  v.field("adapterData", t.adapterData, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const Source& v) {
  json::object o;
  Encoder e{o};
  fieldsOfSource(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, Source& v) {
  Decoder d{r};
  fieldsOfSource(d, v);
}

template <class V, class T>
static void fieldsOfSourceBreakpoint(V& v, T& t) {
  v.field("line", t.line, true);
  v.field("column", t.column, false);
  v.field("condition", t.condition, false);
  v.field("hitCondition", t.hitCondition, false);
  v.field("logMessage", t.logMessage, false);
  v.field("mode", t.mode, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const SourceBreakpoint& v) {
  json::object o;
  Encoder e{o};
  fieldsOfSourceBreakpoint(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, SourceBreakpoint& v) {
  Decoder d{r};
  fieldsOfSourceBreakpoint(d, v);
}

template <class V, class T>
static void fieldsOfSetBreakpointsArguments(V& v, T& t) {
  v.field("source", t.source, true);
  v.field("breakpoints", t.breakpoints, false);
  v.field("lines", t.lines, false);
  v.field("sourceModified", t.sourceModified, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const SetBreakpointsArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfSetBreakpointsArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, SetBreakpointsArguments& v) {
  Decoder d{r};
  fieldsOfSetBreakpointsArguments(d, v);
}

template <class V, class T>
static void fieldsOfFunctionBreakpoint(V& v, T& t) {
  v.field("name", t.name, true);
  v.field("condition", t.condition, false);
  v.field("hitCondition", t.hitCondition, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const FunctionBreakpoint& v) {
  json::object o;
  Encoder e{o};
  fieldsOfFunctionBreakpoint(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, FunctionBreakpoint& v) {
  Decoder d{r};
  fieldsOfFunctionBreakpoint(d, v);
}

template <class V, class T>
static void fieldsOfSetFunctionBreakpointsArguments(V& v, T& t) {
  v.field("breakpoints", t.breakpoints, true);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const SetFunctionBreakpointsArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfSetFunctionBreakpointsArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, SetFunctionBreakpointsArguments& v) {
  Decoder d{r};
  fieldsOfSetFunctionBreakpointsArguments(d, v);
}

template <class V, class T>
static void fieldsOfExceptionFilterOptions(V& v, T& t) {
  v.field("filterId", t.filterId, true);
  v.field("condition", t.condition, false);
  v.field("mode", t.mode, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const ExceptionFilterOptions& v) {
  json::object o;
  Encoder e{o};
  fieldsOfExceptionFilterOptions(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, ExceptionFilterOptions& v) {
  Decoder d{r};
  fieldsOfExceptionFilterOptions(d, v);
}

template <class V, class T>
static void fieldsOfSetExceptionBreakpointsArguments(V& v, T& t) {
  v.field("filters", t.filters, true);
  v.field("filterOptions", t.filterOptions, false);
  v.field("exceptionOptions", t.exceptionOptions, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const SetExceptionBreakpointsArguments& v) {
  json::object o;
  Encoder e{o};
  fieldsOfSetExceptionBreakpointsArguments(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, SetExceptionBreakpointsArguments& v) {
  Decoder d{r};
  fieldsOfSetExceptionBreakpointsArguments(d, v);
}

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
void tag_invoke(const json::value_from_tag&, json::value& jv, const Breakpoint& v) {
  json::object o;
  Encoder e{o};
  fieldsOfBreakpoint(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, Breakpoint& v) {
  Decoder d{r};
  fieldsOfBreakpoint(d, v);
}

template <class V, class T>
static void fieldsOfBreakpointsBody(V& v, T& t) {
  v.field("breakpoints", t.breakpoints, true);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const BreakpointsBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfBreakpointsBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, BreakpointsBody& v) {
  Decoder d{r};
  fieldsOfBreakpointsBody(d, v);
}

template <class V, class T>
static void fieldsOfThread(V& v, T& t) {
  v.field("id", t.id, true);
  v.field("name", t.name, true);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const Thread& v) {
  json::object o;
  Encoder e{o};
  fieldsOfThread(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, Thread& v) {
  Decoder d{r};
  fieldsOfThread(d, v);
}

template <class V, class T>
static void fieldsOfThreadsBody(V& v, T& t) {
  v.field("threads", t.threads, true);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const ThreadsBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfThreadsBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, ThreadsBody& v) {
  Decoder d{r};
  fieldsOfThreadsBody(d, v);
}

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
void tag_invoke(const json::value_from_tag&, json::value& jv, const OutputEventBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfOutputEventBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, OutputEventBody& v) {
  Decoder d{r};
  fieldsOfOutputEventBody(d, v);
}

template <class V, class T>
static void fieldsOfExitedEventBody(V& v, T& t) {
  v.field("exitCode", t.exitCode, true);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const ExitedEventBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfExitedEventBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, ExitedEventBody& v) {
  Decoder d{r};
  fieldsOfExitedEventBody(d, v);
}

template <class V, class T>
static void fieldsOfTerminatedEventBody(V& v, T& t) {
  v.field("restart", t.restart, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const TerminatedEventBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfTerminatedEventBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, TerminatedEventBody& v) {
  Decoder d{r};
  fieldsOfTerminatedEventBody(d, v);
}

template <class V, class T>
static void fieldsOfProcessEventBody(V& v, T& t) {
  v.field("name", t.name, true);
  v.field("systemProcessId", t.systemProcessId, false);
  v.field("isLocalProcess", t.isLocalProcess, false);
  v.field("startMethod", t.startMethod, false);
  v.field("pointerSize", t.pointerSize, false);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const ProcessEventBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfProcessEventBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, ProcessEventBody& v) {
  Decoder d{r};
  fieldsOfProcessEventBody(d, v);
}

template <class V, class T>
static void fieldsOfCapabilitiesEventBody(V& v, T& t) {
  v.field("capabilities", t.capabilities, true);
}
void tag_invoke(const json::value_from_tag&, json::value& jv, const CapabilitiesEventBody& v) {
  json::object o;
  Encoder e{o};
  fieldsOfCapabilitiesEventBody(e, v);
  jv = std::move(o);
}
void tag_invoke(decode_tag, Reader& r, CapabilitiesEventBody& v) {
  Decoder d{r};
  fieldsOfCapabilitiesEventBody(d, v);
}

}  // namespace strata::protocol
