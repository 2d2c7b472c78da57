// Every conversion between NativeDebugger's types and the backend model, in one place.
#include "backends/native/backend/convert.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "strata/hex.hpp"

namespace strata::backends::native_convert {

namespace {

std::string baseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The fault signals that stop the program, each an exception filter: id, label, description.
constexpr const char* kFaultSignals[][3] = {
    {"SIGSEGV", "Segmentation fault (SIGSEGV)", "Stop when the program reads or writes memory it may not"},
    {"SIGBUS", "Bus error (SIGBUS)", "Stop on a misaligned or nonexistent physical address"},
    {"SIGFPE", "Arithmetic exception (SIGFPE)", "Stop on an integer division by zero or a trapping FP operation"},
    {"SIGILL", "Illegal instruction (SIGILL)", "Stop on an instruction the CPU cannot execute"},
    {"SIGABRT", "Abort (SIGABRT)", "Stop when the program aborts (abort(), a failed assert, std::terminate)"}};

// The exception filter of sticky CUDA errors (the collector's strata_gpu_error_stop).
constexpr const char* kCudaFilter[3] = {
    "cuda", "CUDA errors",
    "Stop when a CUDA call returns a sticky error (illegal address, device assert, launch failure) in a program "
    "run with GPU collection: at the program's call, with the error and the last kernel launched"};

const char* domainName(std::uint32_t domain) {
  return domain == 1 ? "driver API" : domain == 2 ? "runtime API" : "API";
}

}  // namespace

// ---- requests -----------------------------------------------------------------------------------

dbg::SourceBreakpoint toDebugger(const SourceBreakpointSpec& b) {
  return dbg::SourceBreakpoint{static_cast<int>(b.line), b.condition.value_or(""), b.hitCondition.value_or(""),
                               b.logMessage.value_or("")};
}

dbg::FunctionBreakpoint toDebugger(const FunctionBreakpointSpec& b) {
  return dbg::FunctionBreakpoint{b.name, b.condition.value_or(""), b.hitCondition.value_or("")};
}

dbg::InstructionBreakpoint toDebugger(const InstructionBreakpointSpec& b, std::uint64_t address) {
  return dbg::InstructionBreakpoint{address, b.condition.value_or(""), b.hitCondition.value_or("")};
}

dbg::StepGranularity toDebugger(Granularity g) {
  return g == Granularity::Instruction ? dbg::StepGranularity::Instruction : dbg::StepGranularity::Line;
}

dbg::VariableFilter variableFilter(const std::string& filter) {
  return filter == "indexed" ? dbg::VariableFilter::Indexed
         : filter == "named" ? dbg::VariableFilter::Named
                             : dbg::VariableFilter::All;
}

int signalOfFilter(const std::string& filterId) {
  return filterId == "SIGSEGV"   ? SIGSEGV
         : filterId == "SIGBUS"  ? SIGBUS
         : filterId == "SIGFPE"  ? SIGFPE
         : filterId == "SIGILL"  ? SIGILL
         : filterId == "SIGABRT" ? SIGABRT
                                 : 0;
}

std::vector<ExceptionFilter> exceptionFilters() {
  std::vector<ExceptionFilter> out;
  for (auto& t : kFaultSignals) out.push_back({t[0], t[1], t[2], true, false, ""});
  out.push_back({kCudaFilter[0], kCudaFilter[1], kCudaFilter[2], true, false, ""});
  return out;
}

bool isCudaFilter(const std::string& filterId) { return filterId == kCudaFilter[0]; }

Result<std::uint64_t> parseMemoryReference(const std::string& reference, std::int64_t offset) {
  const char* text = reference.c_str();
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 0);
  if (reference.empty() || errno != 0 || *end != '\0' || reference[0] == '-')
    return Error{errors::kBadMemoryReference,
                 "'" + reference + "' is not a memory reference (an address such as 0x401136)", false};
  return static_cast<std::uint64_t>(v) + static_cast<std::uint64_t>(offset);
}

std::string dataIdOf(const dbg::DataTarget& target) {
  return hexAddress(target.address) + "/" + std::to_string(target.size) + "/" + target.name;
}

Result<dbg::DataBreakpoint> toDebugger(const DataBreakpointSpec& b) {
  auto first = b.dataId.find('/');
  auto second = first == std::string::npos ? std::string::npos : b.dataId.find('/', first + 1);
  auto address = parseMemoryReference(b.dataId.substr(0, first), 0);
  if (second == std::string::npos || !address)
    return Error{errors::kBadMemoryReference, "'" + b.dataId + "' is not a data breakpoint id from dataBreakpointInfo",
                 false};
  if (b.accessType == "read")
    return Error{errors::kBadWatchpoint, "x86-64 debug registers cannot watch reads alone; use readWrite", false};
  if (b.condition && !b.condition->empty())
    return Error{errors::kBadWatchpoint, "conditions on data breakpoints are not supported; use a hit condition", false};
  dbg::DataBreakpoint d;
  d.address = *address;
  d.size = static_cast<std::uint32_t>(std::atoi(b.dataId.c_str() + first + 1));
  d.description = b.dataId.substr(second + 1);
  d.readWrite = b.accessType == "readWrite";
  d.hitCondition = b.hitCondition.value_or("");
  return d;
}

// ---- answers and events ---------------------------------------------------------------------------

BreakpointReport toReport(const dbg::BreakpointPlacement& b, bool withPath) {
  BreakpointReport s;
  s.verified = b.verified;
  if (b.line > 0) s.line = b.line;
  s.message = b.message;
  if (b.id > 0) s.id = b.id;
  s.pending = !b.verified && b.id > 0 && b.message.rfind("pending", 0) == 0;
  if (withPath && !b.file.empty()) s.path = b.file;
  return s;
}

StopReport toReport(const dbg::DebuggerStop& stop, pid_t pid, const std::map<int, std::string>& breakpointKinds) {
  StopReport info;
  info.threadId = stop.tid;
  info.allThreadsStopped = true;  // the engine is all-stop
  for (int id : stop.hitBreakpointIds) info.hitBreakpointIds.push_back(id);
  switch (stop.reason) {
    case dbg::DebuggerStopReason::Entry: info.reason = "entry"; break;
    case dbg::DebuggerStopReason::Attach:
      info.reason = "entry";
      info.description = "attached to process " + std::to_string(pid);
      break;
    case dbg::DebuggerStopReason::Step: info.reason = "step"; break;
    case dbg::DebuggerStopReason::Pause: info.reason = "pause"; break;
    case dbg::DebuggerStopReason::DataBreakpoint: info.reason = "data breakpoint"; break;
    case dbg::DebuggerStopReason::Exception:
      info.reason = "exception";
      info.text = stop.gpuError ? stop.gpuError->error : stop.description.substr(0, stop.description.find(':'));
      break;
    case dbg::DebuggerStopReason::Breakpoint: {
      info.reason = "breakpoint";
      for (int id : stop.hitBreakpointIds)
        if (auto k = breakpointKinds.find(id); k != breakpointKinds.end()) info.reason = k->second;
      break;
    }
  }
  if (!stop.description.empty()) info.description = stop.description;
  return info;
}

ExceptionInfo toExceptionInfo(const dbg::DebuggerStop& s) {
  if (s.gpuError) {
    const dbg::GpuErrorStop& g = *s.gpuError;
    ExceptionInfo d;
    d.exceptionId = g.error;
    d.description = g.message;
    d.breakMode = "always";
    d.typeName = g.error;
    d.fullTypeName = g.error + " (CUDA " + domainName(g.domain) + " error " + std::to_string(g.result) + ")";
    d.message = g.message;
    // Where the error came from, one fact a line (the Python agent writes the same lines).
    const std::string kernel = g.lastKernel.empty()
                                   ? std::string("none")
                                   : g.lastKernel + " (correlation id " + std::to_string(g.lastCorrelation) + ")";
    d.stackTrace = "CUDA call: " + (g.api.empty() ? std::string("?") : g.api) + " (" + domainName(g.domain) +
                   ", callback id " + std::to_string(g.cbid) + ")\n" +
                   "result: " + std::to_string(g.result) + " " + g.error + "\n" +
                   "last kernel launched on this thread: " + kernel + "\n" +
                   "thread: " + std::to_string(g.threadId) + "\n" +
                   "program's call: " + hexAddress(g.callerPc);
    return d;
  }
  std::string name = s.description.substr(0, s.description.find(':'));
  ExceptionInfo d;
  d.exceptionId = name;
  d.description = s.description;
  d.breakMode = "always";
  d.typeName = name;
  d.fullTypeName = name + " (signal " + std::to_string(s.signal) + ", si_code " + std::to_string(s.signalCode) + ")";
  d.message = s.description;
  if (s.signal != SIGABRT) d.message += " (fault address " + hexAddress(s.faultAddress) + ", pc " + hexAddress(s.pc) + ")";
  return d;
}

ExitStatus toExitStatus(const engine::ExitEvent& exit) {
  ExitStatus st;
  st.exitCode = exit.signaled ? 128 + exit.signal : exit.exitCode;
  if (exit.signaled) st.signal = exit.signal;
  return st;
}

ThreadInfo toThreadInfo(const engine::ThreadEntry& thread) { return ThreadInfo{thread.tid, thread.name}; }

ModuleInfo toModuleInfo(const dbg::ModuleEntry& m, bool loaded) {
  ModuleInfo info;
  info.id = m.path;  // module ids are paths, in events and in the modules list alike
  info.path = m.path;
  info.name = m.name.empty() ? baseName(m.path) : m.name;
  if (loaded) {
    info.symbolStatus = m.hasDebugInfo ? "Symbols loaded." : "No debug information.";
    info.addressRange = hexAddress(m.low) + "-" + hexAddress(m.high);
  }
  return info;
}

FrameInfo toFrameInfo(const dbg::FrameEntry& f, const std::function<bool(const std::string&)>& existsHere,
                      const std::map<std::string, ModuleInfo>& modules) {
  FrameInfo out;
  out.id = f.id;
  out.name = f.name;
  out.cfa = f.cfa;
  if (!f.hasDebugInfo || f.name.empty()) {
    // No debug info: where it is, as module+offset, dimmed; there is no source to show.
    std::string where = (f.module.empty() ? std::string("?") : baseName(f.module)) + "+" + hexAddress(f.moduleOffset);
    std::string symbol = f.name.substr(f.name.find('!') == std::string::npos ? 0 : f.name.find('!') + 1);
    out.name = symbol.empty() || symbol == where ? where : symbol + " (" + where + ")";
    out.presentationHint = "subtle";
  }
  if (f.inlined) out.name += " [inlined]";
  if (f.hasDebugInfo && !f.file.empty()) {
    SourceInfo src;
    src.name = baseName(f.file);
    bool here = f.file.front() == '/';
    if (here) {
      src.path = f.file;
      here = existsHere(f.file);
    }
    // A path relative to a build directory we do not know (a distribution's libc), or in one
    // this machine does not have (a library built elsewhere): dimmed.
    if (!here) {
      src.presentationHint = "deemphasize";
      out.presentationHint = "subtle";
    }
    out.source = src;
    out.line = f.line;
    out.column = f.column > 0 ? f.column : 1;
  }
  out.instructionPointerReference = hexAddress(f.pc);
  // Module ids are paths (as in module events); frames name the module by file name.
  for (const auto& [path, m] : modules)
    if (m.name == f.module || path == f.module) {
      out.moduleId = path;
      break;
    }
  return out;
}

std::vector<ScopeInfo> toScopeInfos(const std::vector<dbg::Scope>& scopes) {
  std::vector<ScopeInfo> out;
  for (const char* want : {"Locals", "Registers", "Globals"})
    for (const auto& s : scopes)
      if (s.name == want) {
        ScopeInfo info;
        info.name = s.name;
        info.presentationHint = s.name == "Locals" ? "locals" : s.name == "Registers" ? "registers" : "";
        info.variablesReference = s.variablesReference;
        info.expensive = s.expensive;
        out.push_back(std::move(info));
      }
  return out;
}

ValueInfo toValueInfo(const dbg::Variable& v) {
  auto count = [](std::uint64_t n) { return n ? std::optional<std::int64_t>(static_cast<std::int64_t>(n)) : std::nullopt; };
  return {.name = v.name, .value = v.value, .type = v.type, .evaluateName = v.evaluateName,
          .variablesReference = v.variablesReference, .namedVariables = count(v.namedChildren),
          .indexedVariables = count(v.indexedChildren),
          .memoryReference = v.memoryReference ? hexAddress(*v.memoryReference) : std::string()};
}

InstructionInfo toInstructionInfo(const dbg::DisassembledInstruction& ins, bool withSymbol) {
  InstructionInfo i;
  i.address = hexAddress(ins.address);
  i.bytes = ins.bytes;
  i.instruction = ins.instruction;
  if (ins.instruction == "??") i.presentationHint = "invalid";
  if (withSymbol) i.symbol = ins.symbol;
  if (!ins.file.empty()) {
    i.location = sourceOf(ins.file);
    i.line = ins.line;
  }
  return i;
}

SourceInfo sourceOf(const std::string& path) {
  SourceInfo s;
  s.name = baseName(path);
  s.path = path;
  return s;
}

StepInTargetInfo toStepInTargetInfo(const dbg::StepInTarget& t) {
  return StepInTargetInfo{t.id, t.label, t.line ? std::optional<std::int64_t>(t.line) : std::nullopt};
}

DataBreakpointTarget toDataBreakpointTarget(const Result<dbg::DataTarget>& r) {
  DataBreakpointTarget t;
  if (!r) {
    t.description = r.error().message;
    return t;
  }
  t.dataId = dataIdOf(*r);
  t.description = r->name + " (" + std::to_string(r->size) + " bytes at " + hexAddress(r->address) + ")";
  t.accessTypes = {"write", "readWrite"};
  return t;
}

MemoryContents toMemoryContents(std::uint64_t address, std::int64_t requested, std::vector<std::uint8_t> readable) {
  MemoryContents m;
  m.address = hexAddress(address);
  m.unreadableBytes = requested - static_cast<std::int64_t>(readable.size());
  m.data = std::move(readable);
  return m;
}

}  // namespace strata::backends::native_convert
