// The native backend's inspection requests: stacks, scopes, variables, evaluate, memory,
// disassembly, modules and step-in targets, with NativeDebugger's answers made model types by
// convert.cpp.
#include <unistd.h>

#include "backends/crash_diagnosis.hpp"
#include "backends/native/backend/convert.hpp"
#include "backends/native/backend/internal.hpp"
#include "backends/native/backend/native_backend.hpp"

namespace strata::backends {

namespace dbg = strata::native::debugger;
namespace convert = native_convert;

// ---- inspection -------------------------------------------------------------------------------------

std::vector<FrameInfo> NativeBackend::toFrames(const std::vector<dbg::FrameEntry>& entries) {
  // Whether a source file exists here, asked once per path.
  auto existsHere = [this](const std::string& path) {
    auto known = sourceHere_.find(path);
    if (known == sourceHere_.end()) known = sourceHere_.emplace(path, ::access(path.c_str(), F_OK) == 0).first;
    return known->second;
  };
  std::vector<FrameInfo> out;
  for (const auto& f : entries) out.push_back(convert::toFrameInfo(f, existsHere, modules_));
  return out;
}

void NativeBackend::stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                               Reply<StackPage> reply) {
  debugger_->stackTrace(static_cast<pid_t>(threadId), static_cast<std::size_t>(startFrame),
                              static_cast<std::size_t>(levels), onSession([this, reply](Result<dbg::FramePage> r) {
          if (!r) return reply(r.takeError());
          StackPage page;
          page.totalFrames = static_cast<std::int64_t>(r->totalFrames);
          page.frames = toFrames(r->frames);
          reply(std::move(page));
        }));
}

void NativeBackend::sampleStack(std::int64_t threadId, std::int64_t levels, std::function<void()> alsoWhileStopped,
                                Reply<std::vector<FrameInfo>> reply) {
  debugger_->sampleStack(static_cast<pid_t>(threadId), static_cast<std::size_t>(levels), std::move(alsoWhileStopped),
                         onSession([this, reply](Result<dbg::FramePage> r) {
                           if (!r) return reply(r.takeError());
                           reply(toFrames(r->frames));
                         }));
}

void NativeBackend::catchEntry(std::int64_t threadId, dbg::OwnCode own, std::uint64_t returnTo, std::uint64_t returnSp,
                               Reply<std::size_t> reply) {
  debugger_->catchEntry(static_cast<pid_t>(threadId), std::move(own), returnTo, returnSp,
                        onSession([reply](Result<std::size_t> r) { reply(std::move(r)); }));
}

void NativeBackend::cancelEntryCatch(Reply<void> reply) {
  debugger_->cancelEntryCatch(onSession([reply](Result<void> r) { reply(std::move(r)); }));
}

void NativeBackend::ownPlace(std::int64_t threadId, dbg::OwnCode own, Reply<dbg::OwnPlace> reply) {
  debugger_->ownPlace(static_cast<pid_t>(threadId), std::move(own),
                      onSession([reply](Result<dbg::OwnPlace> r) { reply(std::move(r)); }));
}

void NativeBackend::symbolAddress(const std::string& name, const std::string& modulePart, Reply<std::uint64_t> reply) {
  debugger_->symbolAddress(name, modulePart, onSession([reply](Result<std::uint64_t> r) { reply(std::move(r)); }));
}

void NativeBackend::writeAddress(std::uint64_t address, std::vector<std::uint8_t> bytes, Reply<void> reply) {
  debugger_->writeMemory(address, std::move(bytes), onSession([reply](Result<void> r) { reply(std::move(r)); }));
}

void NativeBackend::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  debugger_->scopes(static_cast<int>(frameId), onSession([reply](Result<std::vector<dbg::Scope>> r) {
    if (!r) return reply(r.takeError());
    reply(convert::toScopeInfos(*r));
  }));
}

ValueInfo NativeBackend::toValue(const dbg::Variable& v) {
  if (v.variablesReference) indexedCounts_[v.variablesReference] = v.indexedChildren;
  return convert::toValueInfo(v);
}

void NativeBackend::variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) {
  auto filter = convert::variableFilter(query.filter);
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

void NativeBackend::signalInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  auto it = exceptions_.find(threadId);
  if (it == exceptions_.end())
    return reply(Error{errors::kNoException, "thread " + std::to_string(threadId) + " did not stop on a signal or a CUDA error", false});
  reply(convert::toExceptionInfo(it->second));
}

void NativeBackend::exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  auto it = exceptions_.find(threadId);
  if (it == exceptions_.end() || it->second.gpuError) return signalInfo(threadId, std::move(reply));
  // A signal: said with the function it happened in and the program's own frame that led there.
  ExceptionInfo info = convert::toExceptionInfo(it->second);
  stackTrace(threadId, 0, 64, [info = std::move(info), reply](Result<StackPage> page) mutable {
    if (page) info.description = crashDiagnosis(info.description, page->frames);
    reply(std::move(info));
  });
}

void NativeBackend::readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                               Reply<MemoryContents> reply) {
  auto address = convert::parseMemoryReference(memoryReference, offset);
  if (!address) return reply(address.takeError());
  constexpr std::int64_t kMax = 16 << 20;
  if (count > kMax) return reply(Error{errors::kRequestTooLarge, "readMemory: at most 16 MiB at once", false});
  std::uint64_t at = *address;
  debugger_->readMemoryPrefix(at, static_cast<std::size_t>(count), onSession([reply, at, count](Result<std::vector<std::uint8_t>> r) {
          if (!r) return reply(r.takeError());
          reply(convert::toMemoryContents(at, count, std::move(r).value()));
        }));
}

void NativeBackend::writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                                bool allowPartial, Reply<std::int64_t> reply) {
  (void)allowPartial;  // all or nothing: a write either fits or fails with the reason
  auto address = convert::parseMemoryReference(memoryReference, offset);
  if (!address) return reply(address.takeError());
  auto size = static_cast<std::int64_t>(data.size());
  debugger_->writeMemory(*address, std::move(data), onSession([reply, size](Result<void> r) {
    if (!r) return reply(r.takeError());
    reply(size);
  }));
}

void NativeBackend::disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) {
  auto address = convert::parseMemoryReference(query.memoryReference, query.offset);
  if (!address) return reply(address.takeError());
  bool symbols = query.resolveSymbols;
  debugger_->disassembleAround(*address, query.instructionOffset, static_cast<std::size_t>(query.instructionCount), onSession([reply, symbols](Result<std::vector<dbg::DisassembledInstruction>> r) {
          if (!r) return reply(r.takeError());
          std::vector<InstructionInfo> out;
          for (const auto& ins : *r) out.push_back(convert::toInstructionInfo(ins, symbols));
          reply(std::move(out));
        }));
}

void NativeBackend::modules(Reply<std::vector<ModuleInfo>> reply) {
  debugger_->modules(onSession([reply](Result<std::vector<dbg::ModuleEntry>> r) {
    if (!r) return reply(r.takeError());
    std::vector<ModuleInfo> out;
    for (const auto& m : *r) out.push_back(convert::toModuleInfo(m, true));
    reply(std::move(out));
  }));
}

void NativeBackend::loadedSources(Reply<std::vector<SourceInfo>> reply) {
  debugger_->sourceFiles(10000, onSession([reply](Result<std::vector<std::string>> r) {
    if (!r) return reply(r.takeError());
    std::vector<SourceInfo> out;
    for (const auto& path : *r) out.push_back(convert::sourceOf(path));
    reply(std::move(out));
  }));
}

void NativeBackend::stepInTargets(std::int64_t frameId, Reply<std::vector<StepInTargetInfo>> reply) {
  debugger_->stepInTargets(static_cast<int>(frameId), onSession([reply](Result<std::vector<dbg::StepInTarget>> r) {
    if (!r) return reply(r.takeError());
    std::vector<StepInTargetInfo> out;
    for (const auto& t : *r) out.push_back(convert::toStepInTargetInfo(t));
    reply(std::move(out));
  }));
}

}  // namespace strata::backends
