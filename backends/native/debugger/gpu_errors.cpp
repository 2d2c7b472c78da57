// Sticky CUDA errors as exception stops: a hidden breakpoint on the collector's
// strata_gpu_error_stop, the StrataGpuError it is passed read from the target, and the stack
// shown from the program's call.

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "strata/cuda_frames.hpp"
#include "internal.hpp"
#include "strata/demangle.hpp"
#include "strata/strata_gpu.h"

namespace strata::native::debugger {

using State = NativeDebugger::State;

namespace {

constexpr const char* kCollector = "libstrata_cupti.so";
constexpr const char* kStopFunction = "strata_gpu_error_stop";
// Bounds on what is read through the struct's pointers: a damaged struct costs a few pages.
constexpr std::size_t kNameLimit = 1024;
constexpr std::size_t kMessageLimit = 16384;

// A NUL-terminated string of the target, read page by page up to `limit` bytes; whatever was
// readable before an unreadable page or the limit.
std::string readCString(MemoryAccess& memory, std::uint64_t address, std::size_t limit) {
  std::string out;
  if (address == 0) return out;
  char buf[4096];
  while (out.size() < limit) {
    std::size_t chunk = std::min<std::size_t>(limit - out.size(), 4096 - (address % 4096));
    if (!memory.read(address, buf, chunk)) break;
    const void* nul = std::memchr(buf, 0, chunk);
    if (nul) {
      out.append(buf, static_cast<const char*>(nul) - buf);
      break;
    }
    out.append(buf, chunk);
    address += chunk;
  }
  return out;
}

}  // namespace

void State::watchGpuErrors(const sym::Module& module) {
  if (module.name() != kCollector || !module.symbols || gpuErrorSites.count(module.object.path)) return;
  auto symbol = module.symbols->elfSymbolNamed(kStopFunction);
  if (!symbol) return;
  // The predicate runs on every hit (one per process: the collector reports the first sticky
  // error only); with the filter off the program goes on without an event.
  auto id = engine->addBreakpoint(symbol->address + module.object.loadBias,
                                  [this](const engine::HitContext&) { return gpuErrorStops; })
                .get();
  if (id) gpuErrorSites[module.object.path] = *id;
}

void State::forgetGpuErrors(const std::string& path) {
  if (path.empty()) {
    // The engine's breakpoints are already gone (exec, exit, detach).
    gpuErrorSites.clear();
    return;
  }
  auto it = gpuErrorSites.find(path);
  if (it == gpuErrorSites.end()) return;
  (void)engine->removeBreakpoint(it->second).get();
  gpuErrorSites.erase(it);
}

bool State::isGpuErrorSite(const engine::EngineStop& event) const {
  for (auto site : event.breakpoints)
    for (const auto& [path, id] : gpuErrorSites)
      if (id == site) return true;
  return false;
}

void State::describeGpuError(const engine::EngineStop& event, DebuggerStop& info) {
  info.reason = DebuggerStopReason::Exception;
  GpuErrorStop g;
  auto unreadable = [&](const std::string& why) {
    g.error = "CUDA error";
    g.message = "a sticky CUDA error stopped the program, but its details could not be read: " + why;
    info.description = g.message;
    info.gpuError = std::move(g);
  };
  auto regs = engine->registers(event.tid).get();
  if (!regs) return unreadable(regs.error().message);
  // strata_gpu_error_stop(const StrataGpuError*): the breakpoint is its first instruction.
  const std::uint64_t address = regs->gpr.rdi;
  StrataGpuError e{};
  MemoryAccess& memory = engine->memory();
  if (auto r = memory.read(address, &e, sizeof e.size); !r) return unreadable(r.error().message);
  // A collector with a shorter struct: only the fields it has (a longer one: ours).
  const std::size_t have = std::min<std::size_t>(e.size, sizeof e);
  if (have < offsetof(StrataGpuError, api)) return unreadable("its size field says " + std::to_string(e.size) + " bytes");
  if (auto r = memory.read(address, &e, have); !r) return unreadable(r.error().message);
  auto field = [&](std::size_t offset, const char* const& pointer, std::size_t limit) {
    return have >= offset + sizeof pointer ? readCString(memory, reinterpret_cast<std::uint64_t>(pointer), limit)
                                           : std::string();
  };
  g.api = field(offsetof(StrataGpuError, api), e.api, kNameLimit);
  g.error = field(offsetof(StrataGpuError, error), e.error, kNameLimit);
  const std::string mangled = field(offsetof(StrataGpuError, lastKernel), e.lastKernel, kMessageLimit);
  g.message = field(offsetof(StrataGpuError, message), e.message, kMessageLimit);
  g.result = e.result;
  g.domain = e.domain;
  g.cbid = e.cbid;
  g.threadId = e.tid;
  g.lastCorrelation = e.lastCorrelation;
  g.lastSite = e.lastSite;
  g.callerPc = e.callerPc;
  g.lastKernel = demangle(mangled);
  if (!mangled.empty() && g.lastKernel != mangled)
    if (auto at = g.message.find(mangled); at != std::string::npos) g.message.replace(at, mangled.size(), g.lastKernel);
  if (g.error.empty()) g.error = "CUDA error " + std::to_string(g.result);
  if (g.message.empty()) g.message = (g.api.empty() ? std::string("a CUDA call") : g.api) + " returned " + g.error;
  info.description = g.message;
  if (g.callerPc) {
    info.pc = g.callerPc;
    gpuCallers[event.tid] = g.callerPc;
  }
  info.gpuError = std::move(g);
}

std::vector<sym::RawFrame> State::fromProgramCall(pid_t tid, std::vector<sym::RawFrame> raw) const {
  auto caller = gpuCallers.find(tid);
  if (caller == gpuCallers.end()) return raw;
  // The frame whose return address is callerPc is the collector's or CUDA's; its caller, the
  // frame at callerPc, is the program's: the stack starts there. Not found (an unwind that
  // stopped early): the whole stack, rather than none.
  for (std::size_t i = 1; i < raw.size(); ++i)
    if (raw[i].pc == caller->second) {
      raw.erase(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  // A runtime linked into the program (nvcc's default) is the program's module, so callerPc may
  // still be CUDA's own cudaDeviceSynchronize: its frames, named by the module's symbols, go too,
  // so the program's own line is on top. Never the last frame.
  std::size_t cuda = 0;
  while (cuda + 1 < raw.size() && isCudaRuntimeFrame(raw[cuda])) ++cuda;
  raw.erase(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(cuda));
  return raw;
}

bool State::isCudaRuntimeFrame(const sym::RawFrame& frame) const {
  const sym::Module* m = modules.moduleFor(frame.pc);
  if (!m || !m->symbols) return false;
  const std::uint64_t at = frame.lookupPc() - m->object.loadBias;
  if (auto f = m->symbols->functionAt(at); f && cuda_frames::isRuntimeFunction(f->name.empty() ? f->displayName : f->name))
    return true;
  auto where = m->symbols->locationForAddress(at);
  return where && cuda_frames::isCudaHeader(where->file);
}

std::future<Result<void>> NativeDebugger::setGpuErrorStops(bool on, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, on]() -> Result<void> {
    s->gpuErrorStops = on;
    return {};
  }, std::move(done));
}

}  // namespace strata::native::debugger
