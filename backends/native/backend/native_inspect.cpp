// The native backend's inspection requests: stacks, scopes, variables, evaluate, memory,
// disassembly, modules and step-in targets, translated from NativeDebugger's answers.
#include <unistd.h>

#include <cstring>

#include "backends/native/backend/internal.hpp"
#include "backends/native/backend/native_backend.hpp"
#include "strata/hex.hpp"

namespace strata::backends {

namespace dbg = strata::native::debugger;
using native_detail::baseName;

// ---- inspection -------------------------------------------------------------------------------------

void NativeBackend::stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                               Reply<StackPage> reply) {
  debugger_->stackTrace(static_cast<pid_t>(threadId), static_cast<std::size_t>(startFrame),
                              static_cast<std::size_t>(levels), onSession([this, reply](Result<dbg::FramePage> r) {
          if (!r) return reply(r.takeError());
          StackPage page;
          page.totalFrames = static_cast<std::int64_t>(r->totalFrames);
          for (const auto& f : r->frames) {
            FrameInfo out;
            out.id = f.id;
            out.name = f.name;
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
                auto known = sourceHere_.find(f.file);
                if (known == sourceHere_.end())
                  known = sourceHere_.emplace(f.file, ::access(f.file.c_str(), F_OK) == 0).first;
                here = known->second;
              }
              // A path relative to a build directory we do not know (a distribution's libc), or
              // in one this machine does not have (a library built elsewhere): dimmed.
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
            for (const auto& [path, m] : modules_)
              if (m.name == f.module || path == f.module) {
                out.moduleId = path;
                break;
              }
            page.frames.push_back(std::move(out));
          }
          reply(std::move(page));
        }));
}

void NativeBackend::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  debugger_->scopes(static_cast<int>(frameId), onSession([reply](Result<std::vector<dbg::Scope>> r) {
    if (!r) return reply(r.takeError());
    std::vector<ScopeInfo> out;
    for (const char* want : {"Locals", "Registers", "Globals"})
      for (const auto& s : *r)
        if (s.name == want) {
          ScopeInfo info;
          info.name = s.name;
          info.presentationHint = s.name == "Locals" ? "locals" : s.name == "Registers" ? "registers" : "";
          info.variablesReference = s.variablesReference;
          info.expensive = s.expensive;
          out.push_back(std::move(info));
        }
    reply(std::move(out));
  }));
}

ValueInfo NativeBackend::toValue(const dbg::Variable& v) {
  ValueInfo out;
  out.name = v.name;
  out.value = v.value;
  out.type = v.type;
  out.evaluateName = v.evaluateName;
  out.variablesReference = v.variablesReference;
  if (v.namedChildren) out.namedVariables = static_cast<std::int64_t>(v.namedChildren);
  if (v.indexedChildren) out.indexedVariables = static_cast<std::int64_t>(v.indexedChildren);
  if (v.memoryReference) out.memoryReference = hexAddress(*v.memoryReference);
  if (v.variablesReference) indexedCounts_[v.variablesReference] = v.indexedChildren;
  return out;
}

void NativeBackend::variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) {
  auto filter = query.filter == "indexed" ? dbg::VariableFilter::Indexed
                : query.filter == "named" ? dbg::VariableFilter::Named
                                          : dbg::VariableFilter::All;
  std::uint64_t indexed = 0;
  if (auto it = indexedCounts_.find(query.variablesReference); it != indexedCounts_.end()) indexed = it->second;
  bool capped = query.count == 0 && filter != dbg::VariableFilter::Named && indexed > kUnpagedLimit + query.start;
  std::uint64_t count = capped ? kUnpagedLimit : static_cast<std::uint64_t>(query.count);
  debugger_->variables(static_cast<int>(query.variablesReference), filter, static_cast<std::uint64_t>(query.start),
                             count, onSession([this, reply, capped, indexed](Result<std::vector<dbg::Variable>> r) {
          if (!r) return reply(r.takeError());
          std::vector<ValueInfo> out;
          for (const auto& v : *r) out.push_back(toValue(v));
          if (capped) {
            // An unpaged request for a huge container gets a bounded answer that says so.
            ValueInfo more;
            more.name = "[more]";
            more.value = "showing " + std::to_string(kUnpagedLimit) + " of " + std::to_string(indexed) +
                         " elements; the rest are read in pages (variables with start/count)";
            out.push_back(std::move(more));
          }
          reply(std::move(out));
        }));
}

void NativeBackend::evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
  std::string text = query.expression;
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  if (text.empty()) return reply(Error{errors::kBadExpression, "nothing to evaluate", false});
  debugger_->evaluate(text, static_cast<int>(query.frameId.value_or(0)), onSession([this, reply](Result<dbg::Variable> r) {
    if (!r) return reply(r.takeError());
    reply(toValue(*r));
  }));
}

void NativeBackend::setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                                Reply<ValueInfo> reply) {
  debugger_->setVariable(static_cast<int>(variablesReference), name, value, onSession([this, reply](Result<dbg::Variable> r) {
          if (!r) return reply(r.takeError());
          reply(toValue(*r));
        }));
}

void NativeBackend::exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  auto it = exceptions_.find(threadId);
  if (it == exceptions_.end())
    return reply(Error{errors::kNoException, "thread " + std::to_string(threadId) + " did not stop on a signal", false});
  const auto& s = it->second;
  std::string name = s.description.substr(0, s.description.find(':'));
  ExceptionInfo d;
  d.exceptionId = name;
  d.description = s.description;
  d.breakMode = "always";
  d.typeName = name;
  d.fullTypeName = name + " (signal " + std::to_string(s.signal) + ", si_code " + std::to_string(s.signalCode) + ")";
  d.message = s.description;
  if (s.signal != SIGABRT) d.message += " (fault address " + hexAddress(s.faultAddress) + ", pc " + hexAddress(s.pc) + ")";
  reply(std::move(d));
}

void NativeBackend::readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                               Reply<MemoryContents> reply) {
  auto address = parseReference(memoryReference, offset);
  if (!address) return reply(address.takeError());
  constexpr std::int64_t kMax = 16 << 20;
  if (count > kMax) return reply(Error{errors::kRequestTooLarge, "readMemory: at most 16 MiB at once", false});
  std::uint64_t at = *address;
  debugger_->readMemoryPrefix(at, static_cast<std::size_t>(count), onSession([reply, at, count](Result<std::vector<std::uint8_t>> r) {
          if (!r) return reply(r.takeError());
          MemoryContents m;
          m.address = hexAddress(at);
          m.unreadableBytes = count - static_cast<std::int64_t>(r->size());
          m.data = std::move(r).value();
          reply(std::move(m));
        }));
}

void NativeBackend::writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                                bool allowPartial, Reply<std::int64_t> reply) {
  (void)allowPartial;  // all or nothing: a write either fits or fails with the reason
  auto address = parseReference(memoryReference, offset);
  if (!address) return reply(address.takeError());
  auto size = static_cast<std::int64_t>(data.size());
  debugger_->writeMemory(*address, std::move(data), onSession([reply, size](Result<void> r) {
    if (!r) return reply(r.takeError());
    reply(size);
  }));
}

void NativeBackend::disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) {
  auto address = parseReference(query.memoryReference, query.offset);
  if (!address) return reply(address.takeError());
  bool symbols = query.resolveSymbols;
  debugger_->disassembleAround(*address, query.instructionOffset, static_cast<std::size_t>(query.instructionCount), onSession([reply, symbols](Result<std::vector<dbg::DisassembledInstruction>> r) {
          if (!r) return reply(r.takeError());
          std::vector<InstructionInfo> out;
          for (const auto& ins : *r) {
            InstructionInfo i;
            i.address = hexAddress(ins.address);
            i.bytes = ins.bytes;
            i.instruction = ins.instruction;
            if (ins.instruction == "??") i.presentationHint = "invalid";
            if (symbols) i.symbol = ins.symbol;
            if (!ins.file.empty()) {
              SourceInfo src;
              src.name = baseName(ins.file);
              src.path = ins.file;
              i.location = src;
              i.line = ins.line;
            }
            out.push_back(std::move(i));
          }
          reply(std::move(out));
        }));
}

void NativeBackend::modules(Reply<std::vector<ModuleInfo>> reply) {
  debugger_->modules(onSession([reply](Result<std::vector<dbg::ModuleEntry>> r) {
    if (!r) return reply(r.takeError());
    std::vector<ModuleInfo> out;
    for (const auto& m : *r)
      out.push_back(ModuleInfo{m.path, m.name, m.path, m.hasDebugInfo ? "Symbols loaded." : "No debug information.",
                               hexAddress(m.low) + "-" + hexAddress(m.high)});
    reply(std::move(out));
  }));
}

void NativeBackend::loadedSources(Reply<std::vector<SourceInfo>> reply) {
  debugger_->sourceFiles(10000, onSession([reply](Result<std::vector<std::string>> r) {
    if (!r) return reply(r.takeError());
    std::vector<SourceInfo> out;
    for (const auto& path : *r) {
      SourceInfo s;
      s.name = baseName(path);
      s.path = path;
      out.push_back(std::move(s));
    }
    reply(std::move(out));
  }));
}

void NativeBackend::stepInTargets(std::int64_t frameId, Reply<std::vector<StepInTargetInfo>> reply) {
  debugger_->stepInTargets(static_cast<int>(frameId), onSession([reply](Result<std::vector<dbg::StepInTarget>> r) {
    if (!r) return reply(r.takeError());
    std::vector<StepInTargetInfo> out;
    for (const auto& t : *r) out.push_back(StepInTargetInfo{t.id, t.label, t.line ? std::optional<std::int64_t>(t.line) : std::nullopt});
    reply(std::move(out));
  }));
}

}  // namespace strata::backends
