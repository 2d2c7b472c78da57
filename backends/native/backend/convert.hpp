// The native backend's one conversion boundary: NativeDebugger's types to and from the neutral
// backend model, and the text forms of the addresses this backend hands out and takes back.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/model.hpp"
#include "strata/native/debugger/debugger.hpp"

namespace strata::backends::native_convert {

namespace dbg = strata::native::debugger;
namespace engine = strata::native::engine;

// ---- requests: model -> debugger ------------------------------------------------------------
dbg::SourceBreakpoint toDebugger(const SourceBreakpointSpec& b);
dbg::FunctionBreakpoint toDebugger(const FunctionBreakpointSpec& b);
dbg::InstructionBreakpoint toDebugger(const InstructionBreakpointSpec& b, std::uint64_t address);
dbg::StepGranularity toDebugger(Granularity g);
dbg::VariableFilter variableFilter(const std::string& filter);  // "", named, indexed
// The exception filter of a fault signal ("SIGSEGV") to its number; 0: not one of ours.
int signalOfFilter(const std::string& filterId);
std::vector<ExceptionFilter> exceptionFilters();  // one per fault signal and `cuda`, all on
bool isCudaFilter(const std::string& filterId);   // "cuda": sticky CUDA errors

// Memory references are hexadecimal addresses ("0x401136"); `offset` is added.
Result<std::uint64_t> parseMemoryReference(const std::string& reference, std::int64_t offset);
// A dataId is "0xADDR/SIZE/NAME": what dataBreakpointInfo hands out and setDataBreakpoints
// takes back. The error says why a request cannot be a watchpoint.
std::string dataIdOf(const dbg::DataTarget& target);
Result<dbg::DataBreakpoint> toDebugger(const DataBreakpointSpec& b);

// ---- answers and events: debugger -> model ---------------------------------------------------
// The answer to a set request, or a placement that changed later (a pending one now verified);
// withPath: the report names its file (a change, or a breakpoint not set by file).
BreakpointReport toReport(const dbg::BreakpointPlacement& b, bool withPath);
// breakpointKinds: the stop reason of each breakpoint that is not a source line's (function,
// instruction, data breakpoint), by its id.
StopReport toReport(const dbg::DebuggerStop& stop, pid_t pid, const std::map<int, std::string>& breakpointKinds);
ExceptionInfo toExceptionInfo(const dbg::DebuggerStop& stop);
ExitStatus toExitStatus(const engine::ExitEvent& exit);
ThreadInfo toThreadInfo(const engine::ThreadEntry& thread);
// A module loaded, or removed (then only its path and name are known).
ModuleInfo toModuleInfo(const dbg::ModuleEntry& module, bool loaded);
// existsHere: whether a source path exists on this machine; modules: as announced, by path.
FrameInfo toFrameInfo(const dbg::FrameEntry& frame, const std::function<bool(const std::string&)>& existsHere,
                      const std::map<std::string, ModuleInfo>& modules);
std::vector<ScopeInfo> toScopeInfos(const std::vector<dbg::Scope>& scopes);  // Locals, Registers, Globals
ValueInfo toValueInfo(const dbg::Variable& variable);
InstructionInfo toInstructionInfo(const dbg::DisassembledInstruction& instruction, bool withSymbol);
SourceInfo sourceOf(const std::string& path);
StepInTargetInfo toStepInTargetInfo(const dbg::StepInTarget& target);
// What dataBreakpointInfo answers: an id to watch, or why the thing cannot be watched.
DataBreakpointTarget toDataBreakpointTarget(const Result<dbg::DataTarget>& target);
MemoryContents toMemoryContents(std::uint64_t address, std::int64_t requested, std::vector<std::uint8_t> readable);

}  // namespace strata::backends::native_convert
