// Field lists of the debugging structs (debug_types.hpp); one list per struct drives both
// directions.
#include "strata/protocol/debug_types.hpp"

#include "codec.hpp"

namespace strata::protocol {

STRATA_CODEC(ConnectTarget,
  v.field("host", t.host, false);
  v.field("port", t.port, false);)

STRATA_CODEC(RankNode,
  v.field("host", t.host, false);
  v.field("port", t.port, false);
  v.field("token", t.token, false);
  v.field("processIds", t.processIds, false);
  v.field("processTree", t.processTree, false);)

STRATA_CODEC(AttachRequestArguments,
  v.field("connect", t.connect, false);
  v.field("host", t.host, false);
  v.field("port", t.port, false);
  v.field("justMyCode", t.justMyCode, false);
  v.field("stopOnEntry", t.stopOnEntry, false);
  v.field("processId", t.processId, false);
  v.field("native", t.native, false);
  v.field("__restart", t.__restart, false);
  v.field("listen", t.listen, false);
  v.field("token", t.token, false);
  v.field("timeout", t.timeout, false);
  v.field("processIds", t.processIds, false);
  v.field("processTree", t.processTree, false);
  v.field("rankFilter", t.rankFilter, false);
  v.field("stopAll", t.stopAll, false);
  v.field("subProcess", t.subProcess, false);
  v.field("nodes", t.nodes, false);
  v.field("sourceMap", t.sourceMap, false);)

STRATA_CODEC(ContinueArguments,
  v.field("threadId", t.threadId, true);
  v.field("singleThread", t.singleThread, false);)

STRATA_CODEC(ContinueResponseBody,
  v.field("allThreadsContinued", t.allThreadsContinued, false);)

STRATA_CODEC(StepArguments,
  v.field("threadId", t.threadId, true);
  v.field("singleThread", t.singleThread, false);
  v.field("targetId", t.targetId, false);
  v.field("granularity", t.granularity, false);)

STRATA_CODEC(PauseArguments,
  v.field("threadId", t.threadId, true);)

STRATA_CODEC(StackTraceArguments,
  v.field("threadId", t.threadId, true);
  v.field("startFrame", t.startFrame, false);
  v.field("levels", t.levels, false);
  v.field("format", t.format, false);)

STRATA_CODEC(StackFrame,
  v.field("id", t.id, true);
  v.field("name", t.name, true);
  v.field("source", t.source, false);
  v.field("line", t.line, true);
  v.field("column", t.column, true);
  v.field("presentationHint", t.presentationHint, false);
  v.field("instructionPointerReference", t.instructionPointerReference, false);
  v.field("moduleId", t.moduleId, false);)

STRATA_CODEC(StackTraceBody,
  v.field("stackFrames", t.stackFrames, true);
  v.field("totalFrames", t.totalFrames, false);)

STRATA_CODEC(ScopesArguments,
  v.field("frameId", t.frameId, true);)

STRATA_CODEC(Scope,
  v.field("name", t.name, true);
  v.field("presentationHint", t.presentationHint, false);
  v.field("variablesReference", t.variablesReference, true);
  v.field("namedVariables", t.namedVariables, false);
  v.field("indexedVariables", t.indexedVariables, false);
  v.field("expensive", t.expensive, true);)

STRATA_CODEC(ScopesBody,
  v.field("scopes", t.scopes, true);)

STRATA_CODEC(VariablesArguments,
  v.field("variablesReference", t.variablesReference, true);
  v.field("filter", t.filter, false);
  v.field("start", t.start, false);
  v.field("count", t.count, false);
  v.field("format", t.format, false);)

STRATA_CODEC(VariablePresentationHint,
  v.field("kind", t.kind, false);
  v.field("attributes", t.attributes, false);
  v.field("visibility", t.visibility, false);
  v.field("lazy", t.lazy, false);)

STRATA_CODEC(Variable,
  v.field("name", t.name, true);
  v.field("value", t.value, true);
  v.field("type", t.type, false);
  v.field("presentationHint", t.presentationHint, false);
  v.field("evaluateName", t.evaluateName, false);
  v.field("variablesReference", t.variablesReference, true);
  v.field("namedVariables", t.namedVariables, false);
  v.field("indexedVariables", t.indexedVariables, false);
  v.field("memoryReference", t.memoryReference, false);)

STRATA_CODEC(VariablesBody,
  v.field("variables", t.variables, true);)

STRATA_CODEC(EvaluateArguments,
  v.field("expression", t.expression, true);
  v.field("frameId", t.frameId, false);
  v.field("line", t.line, false);
  v.field("column", t.column, false);
  v.field("source", t.source, false);
  v.field("context", t.context, false);
  v.field("format", t.format, false);)

STRATA_CODEC(EvaluateResponseBody,
  v.field("result", t.result, true);
  v.field("type", t.type, false);
  v.field("presentationHint", t.presentationHint, false);
  v.field("variablesReference", t.variablesReference, true);
  v.field("namedVariables", t.namedVariables, false);
  v.field("indexedVariables", t.indexedVariables, false);
  v.field("memoryReference", t.memoryReference, false);)

STRATA_CODEC(SetVariableArguments,
  v.field("variablesReference", t.variablesReference, true);
  v.field("name", t.name, true);
  v.field("value", t.value, true);
  v.field("format", t.format, false);)

STRATA_CODEC(SetExpressionArguments,
  v.field("expression", t.expression, true);
  v.field("value", t.value, true);
  v.field("frameId", t.frameId, false);
  v.field("format", t.format, false);)

STRATA_CODEC(SetValueResponseBody,
  v.field("value", t.value, true);
  v.field("type", t.type, false);
  v.field("presentationHint", t.presentationHint, false);
  v.field("variablesReference", t.variablesReference, false);
  v.field("namedVariables", t.namedVariables, false);
  v.field("indexedVariables", t.indexedVariables, false);)

STRATA_CODEC(CompletionsArguments,
  v.field("frameId", t.frameId, false);
  v.field("text", t.text, true);
  v.field("column", t.column, true);
  v.field("line", t.line, false);)

STRATA_CODEC(CompletionItem,
  v.field("label", t.label, true);
  v.field("text", t.text, false);
  v.field("type", t.type, false);
  v.field("start", t.start, false);
  v.field("length", t.length, false);)

STRATA_CODEC(CompletionsBody,
  v.field("targets", t.targets, true);)

STRATA_CODEC(ExceptionInfoArguments,
  v.field("threadId", t.threadId, true);)

STRATA_CODEC(ExceptionDetails,
  v.field("message", t.message, false);
  v.field("typeName", t.typeName, false);
  v.field("fullTypeName", t.fullTypeName, false);
  v.field("evaluateName", t.evaluateName, false);
  v.field("stackTrace", t.stackTrace, false);)

STRATA_CODEC(ExceptionInfoResponseBody,
  v.field("exceptionId", t.exceptionId, true);
  v.field("description", t.description, false);
  v.field("breakMode", t.breakMode, true);
  v.field("details", t.details, false);)

STRATA_CODEC(SourceArguments,
  v.field("source", t.source, false);
  v.field("sourceReference", t.sourceReference, true);)

STRATA_CODEC(SourceResponseBody,
  v.field("content", t.content, true);
  v.field("mimeType", t.mimeType, false);)

STRATA_CODEC(StoppedEventBody,
  v.field("reason", t.reason, true);
  v.field("description", t.description, false);
  v.field("threadId", t.threadId, false);
  v.field("preserveFocusHint", t.preserveFocusHint, false);
  v.field("text", t.text, false);
  v.field("allThreadsStopped", t.allThreadsStopped, false);
  v.field("hitBreakpointIds", t.hitBreakpointIds, false);)

STRATA_CODEC(ContinuedEventBody,
  v.field("threadId", t.threadId, true);
  v.field("allThreadsContinued", t.allThreadsContinued, false);)

STRATA_CODEC(ThreadEventBody,
  v.field("reason", t.reason, true);
  v.field("threadId", t.threadId, true);)

STRATA_CODEC(BreakpointEventBody,
  v.field("reason", t.reason, true);
  v.field("breakpoint", t.breakpoint, true);)

STRATA_CODEC(DataBreakpointInfoArguments,
  v.field("variablesReference", t.variablesReference, false);
  v.field("name", t.name, true);
  v.field("frameId", t.frameId, false);
  v.field("bytes", t.bytes, false);
  v.field("asAddress", t.asAddress, false);
  v.field("mode", t.mode, false);)

STRATA_CODEC(DataBreakpoint,
  v.field("dataId", t.dataId, true);
  v.field("accessType", t.accessType, false);
  v.field("condition", t.condition, false);
  v.field("hitCondition", t.hitCondition, false);)

STRATA_CODEC(SetDataBreakpointsArguments,
  v.field("breakpoints", t.breakpoints, true);)

STRATA_CODEC(InstructionBreakpoint,
  v.field("instructionReference", t.instructionReference, true);
  v.field("offset", t.offset, false);
  v.field("condition", t.condition, false);
  v.field("hitCondition", t.hitCondition, false);
  v.field("mode", t.mode, false);)

STRATA_CODEC(SetInstructionBreakpointsArguments,
  v.field("breakpoints", t.breakpoints, true);)

STRATA_CODEC(ReadMemoryArguments,
  v.field("memoryReference", t.memoryReference, true);
  v.field("offset", t.offset, false);
  v.field("count", t.count, true);)

STRATA_CODEC(WriteMemoryArguments,
  v.field("memoryReference", t.memoryReference, true);
  v.field("offset", t.offset, false);
  v.field("allowPartial", t.allowPartial, false);
  v.field("data", t.data, true);)

STRATA_CODEC(DisassembleArguments,
  v.field("memoryReference", t.memoryReference, true);
  v.field("offset", t.offset, false);
  v.field("instructionOffset", t.instructionOffset, false);
  v.field("instructionCount", t.instructionCount, true);
  v.field("resolveSymbols", t.resolveSymbols, false);)

STRATA_CODEC(ModulesArguments,
  v.field("startModule", t.startModule, false);
  v.field("moduleCount", t.moduleCount, false);)

STRATA_CODEC(StepInTargetsArguments,
  v.field("frameId", t.frameId, true);)

}  // namespace strata::protocol
