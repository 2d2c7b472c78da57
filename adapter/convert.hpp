// The adapter's one conversion boundary: the backend model to and from DAP's types. On the way
// out, the ids a backend numbers on its own (frames, variables, sources, breakpoints) become
// session-global. Which capabilities a backend's features turn into is capabilities.cpp's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapter/session.hpp"

namespace strata::adapter {

// ---- requests: protocol -> model ----------------------------------------------------------------
// setBreakpoints: its `breakpoints`, or the older `lines`.
std::vector<backends::SourceBreakpointSpec> toSpecs(const protocol::SetBreakpointsArguments& args);
std::vector<backends::FunctionBreakpointSpec> toSpecs(const protocol::SetFunctionBreakpointsArguments& args);
std::vector<backends::InstructionBreakpointSpec> toSpecs(const protocol::SetInstructionBreakpointsArguments& args);
std::vector<backends::DataBreakpointSpec> toSpecs(const protocol::SetDataBreakpointsArguments& args);
// `filters` first, then `filterOptions` (with their conditions).
std::vector<backends::ExceptionFilterSpec> toSpecs(const protocol::SetExceptionBreakpointsArguments& args);
// statement, line or instruction; nothing for any other name.
std::optional<backends::Granularity> toGranularity(const std::string& name);

// ---- answers and events: model -> protocol -------------------------------------------------------
// `owner` is the backend that numbered the ids inside.
protocol::Breakpoint toProtocol(Session& session, backends::Backend* owner, const backends::BreakpointReport& s);
protocol::Source toProtocol(Session& session, backends::Backend* owner, const backends::SourceInfo& s);
// `scope`: the stop the ids inside belong to (Session::idScope when the request was made). A value
// answered after that thread ran again keeps its text but shows no children (their references
// belong to a stop that is over).
protocol::StackTraceBody toProtocol(Session& session, backends::Backend* owner, const backends::StackPage& page,
                                    const Session::IdScope& scope);
protocol::ScopesBody toProtocol(Session& session, backends::Backend* owner, const std::vector<backends::ScopeInfo>& scopes,
                                const Session::IdScope& scope);
protocol::VariablesBody toProtocol(Session& session, backends::Backend* owner, const std::vector<backends::ValueInfo>& values,
                                   const Session::IdScope& scope);
protocol::EvaluateResponseBody toEvaluateBody(Session& session, backends::Backend* owner, const backends::ValueInfo& v,
                                             const Session::IdScope& scope);
protocol::SetValueResponseBody toSetValueBody(Session& session, backends::Backend* owner, const backends::ValueInfo& v,
                                              const Session::IdScope& scope);
protocol::StoppedEventBody toProtocol(Session& session, backends::Backend* owner, const backends::StopReport& stop);
protocol::ThreadsBody toProtocol(const std::vector<backends::ThreadInfo>& threads);
protocol::CompletionsBody toProtocol(const std::vector<backends::CompletionEntry>& entries);
protocol::ExceptionInfoResponseBody toProtocol(const backends::ExceptionInfo& info);
protocol::SourceResponseBody toProtocol(const backends::SourceContent& content);
protocol::ExceptionBreakpointsFilter toProtocol(const backends::ExceptionFilter& filter);
// Bodies that protocol/ has no typed struct for yet, as JSON.
json::object toJson(const backends::ModuleInfo& module);
json::value toJson(const backends::MemoryContents& memory);                       // readMemory
json::value toJson(const backends::DataBreakpointTarget& target);                 // dataBreakpointInfo
json::value toJson(const std::vector<backends::StepInTargetInfo>& targets);       // stepInTargets
json::value toJson(Session& session, backends::Backend* owner,
                   const std::vector<backends::InstructionInfo>& instructions);   // disassemble
json::value toJson(const backends::GpuActivityReport& activity);                 // the gpuActivity event

}  // namespace strata::adapter
