// Every request Strata answers and the struct its arguments decode into: the one list the
// adapter's handlers are checked against (tests/unit/adapter/requests_test.cpp, and a
// static_assert in TypedHandler) and the fuzzers walk, so no decoder goes unfuzzed.
#pragma once

#include <string_view>
#include <type_traits>

#include "strata/protocol/debug_types.hpp"
#include "strata/protocol/gpu_types.hpp"
#include "strata/protocol/stacks_types.hpp"
#include "strata/protocol/types.hpp"

namespace strata::protocol {

// A request and its arguments' type; Args is void for requests whose arguments Strata does
// not read (threads, configurationDone, loadedSources).
template <class Args>
struct RequestKind {
  std::string_view command;
};

// Calls f(RequestKind<Args>{command}) for each request, in the order of the specification's
// sections. Adding a request means adding its line here; the unit test above fails until then.
template <class F>
constexpr void forEachRequest(F&& f) {
  // lifecycle
  f(RequestKind<InitializeRequestArguments>{"initialize"});
  f(RequestKind<void>{"configurationDone"});
  f(RequestKind<LaunchRequestArguments>{"launch"});
  f(RequestKind<AttachRequestArguments>{"attach"});
  f(RequestKind<DisconnectArguments>{"disconnect"});
  f(RequestKind<TerminateArguments>{"terminate"});
  f(RequestKind<CancelArguments>{"cancel"});
  // breakpoints
  f(RequestKind<SetBreakpointsArguments>{"setBreakpoints"});
  f(RequestKind<SetFunctionBreakpointsArguments>{"setFunctionBreakpoints"});
  f(RequestKind<SetExceptionBreakpointsArguments>{"setExceptionBreakpoints"});
  f(RequestKind<DataBreakpointInfoArguments>{"dataBreakpointInfo"});
  f(RequestKind<SetDataBreakpointsArguments>{"setDataBreakpoints"});
  f(RequestKind<SetInstructionBreakpointsArguments>{"setInstructionBreakpoints"});
  // execution control
  f(RequestKind<ContinueArguments>{"continue"});
  f(RequestKind<StepArguments>{"next"});
  f(RequestKind<StepArguments>{"stepIn"});
  f(RequestKind<StepArguments>{"stepOut"});
  f(RequestKind<PauseArguments>{"pause"});
  // inspection
  f(RequestKind<StackTraceArguments>{"stackTrace"});
  f(RequestKind<ScopesArguments>{"scopes"});
  f(RequestKind<VariablesArguments>{"variables"});
  f(RequestKind<SetVariableArguments>{"setVariable"});
  f(RequestKind<SourceArguments>{"source"});
  f(RequestKind<void>{"threads"});
  f(RequestKind<ModulesArguments>{"modules"});
  f(RequestKind<void>{"loadedSources"});
  f(RequestKind<EvaluateArguments>{"evaluate"});
  f(RequestKind<SetExpressionArguments>{"setExpression"});
  f(RequestKind<StepInTargetsArguments>{"stepInTargets"});
  f(RequestKind<CompletionsArguments>{"completions"});
  f(RequestKind<ExceptionInfoArguments>{"exceptionInfo"});
  f(RequestKind<ReadMemoryArguments>{"readMemory"});
  f(RequestKind<WriteMemoryArguments>{"writeMemory"});
  f(RequestKind<DisassembleArguments>{"disassemble"});
  // Strata's GPU requests (DESIGN: "Custom DAP surface")
  f(RequestKind<GpuSummaryArguments>{"gpuSummary"});
  f(RequestKind<GpuTimelineArguments>{"gpuTimeline"});
  f(RequestKind<GpuKernelArguments>{"gpuKernel"});
  f(RequestKind<GpuExportArguments>{"gpuExport"});
  f(RequestKind<GpuStartArguments>{"gpuStart"});
  f(RequestKind<GpuProfileArguments>{"gpuProfile"});
  f(RequestKind<GpuStopArguments>{"gpuStop"});
  // The stacks of several processes in one tree (the ranks of a distributed job)
  f(RequestKind<ParallelStacksArguments>{"parallelStacks"});
}

// Whether some request in the list decodes its arguments into Args.
template <class Args>
constexpr bool isRequestArguments() {
  bool found = false;
  forEachRequest([&found]<class A>(RequestKind<A>) { found = found || std::is_same_v<A, Args>; });
  return found;
}

}  // namespace strata::protocol
