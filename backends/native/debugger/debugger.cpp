// NativeDebugger: lifecycle, the engine's events, and the thread-safe front of every request.
#include <atomic>

#include "internal.hpp"
#include "strata/native/symbols/fault_access.hpp"

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "strata/core/core_writer.hpp"
#include "strata/native/debugger/engine_process.hpp"

namespace strata::native::debugger {

const char* stopReasonName(DebuggerStopReason reason) {
  switch (reason) {
    case DebuggerStopReason::Entry: return "entry";
    case DebuggerStopReason::Breakpoint: return "breakpoint";
    case DebuggerStopReason::Step: return "step";
    case DebuggerStopReason::Pause: return "pause";
    case DebuggerStopReason::Exception: return "exception";
    case DebuggerStopReason::Attach: return "attach";
    case DebuggerStopReason::DataBreakpoint: return "data breakpoint";
  }
  return "unknown";
}

NativeDebugger::State::State(Callbacks cb, const std::string& engineProgram) : callbacks(std::move(cb)) {
  if (engineProgram.empty()) engine = std::make_unique<engine::Engine>(*this);
  else engine = startRemoteEngine(*this, engineProgram);
}

// Work already queued (a detach asked for just before) runs while `engine` is still set.
NativeDebugger::State::~State() {
  engine->stop();
  engine.reset();
}

void NativeDebugger::State::report(DebuggerStop info) {
  dropEntryCatch();  // whatever stopped the program ends a step into own code
  lastTid = info.tid;
  if (callbacks.stopped) emit([this, info] { callbacks.stopped(info); });
}

void NativeDebugger::State::onStopped(const engine::EngineStop& event) {
  forgetStop();
  if (holding && (event.reason == engine::EngineStopReason::Entry || event.reason == engine::EngineStopReason::Attach)) {
    lastTid = event.tid;
    return;
  }
  DebuggerStop info;
  info.tid = event.tid;
  info.pc = event.pc;
  switch (event.reason) {
    case engine::EngineStopReason::Step:
    case engine::EngineStopReason::StepOut:
      if (step && continueStep(event)) return;
      info.reason = DebuggerStopReason::Step;
      break;
    case engine::EngineStopReason::Breakpoint:
      // The entry catch alone: a step (into own code) ends here.
      info.reason = onlyEntryCatch(event) ? DebuggerStopReason::Step : DebuggerStopReason::Breakpoint;
      // The collector's hidden breakpoint: an exception stop, never a user breakpoint (a user
      // breakpoint at the same place still counts as hit).
      if (isGpuErrorSite(event)) describeGpuError(event, info);
      for (auto site : event.breakpoints) {
        auto owner = siteOwner.find(site);
        if (owner == siteOwner.end()) continue;
        bool seen = false;
        for (int id : info.hitBreakpointIds) seen |= id == owner->second;
        if (!seen) info.hitBreakpointIds.push_back(owner->second);
      }
      break;
    case engine::EngineStopReason::Exception:
      if (stopSignalsSet && !stopSignals.count(event.signal.signo)) {
        // Not a signal the user stops on: the program meets it as it would without us.
        step.reset();
        (void)engine->resume().get();
        return;
      }
      info.reason = DebuggerStopReason::Exception;
      info.signal = event.signal.signo;
      info.signalCode = event.signal.code;
      info.faultAddress = event.signal.faultAddress;
      info.description = event.signal.description;
      if (event.signal.signo == SIGSEGV) {
        // What failed, read or write, from the faulting instruction (the kernel does not say).
        if (auto regs = engine->registers(event.tid).get(); regs) {
          auto site = symbols::faultSite(engine->memory(), *regs, event.signal.faultAddress);
          info.description = symbols::describeFault(event.signal.signo, event.signal.code, event.signal.faultAddress, site,
                                                    event.signal.description);
        }
      }
      if (!coreDir.empty()) writeCrashCore(event);
      break;
    case engine::EngineStopReason::Watchpoint:
      if (!describeWatchHit(event, info)) {
        // A hit condition says not yet; a step in progress goes on as if nothing happened.
        if (step && continueStep(event)) return;
        step.reset();
        (void)engine->resume().get();
        return;
      }
      break;
    case engine::EngineStopReason::Entry: info.reason = DebuggerStopReason::Entry; break;
    case engine::EngineStopReason::Attach: info.reason = DebuggerStopReason::Attach; break;
    case engine::EngineStopReason::Exec:
      forgetGpuErrors({});  // the old image's breakpoints are gone
      info.reason = DebuggerStopReason::Pause;
      info.description = "the program called execve";
      break;
    case engine::EngineStopReason::Pause: info.reason = DebuggerStopReason::Pause; break;
  }
  step.reset();
  report(std::move(info));
}

// coreOnCrash: the core of the crashed process, taken at the stop (every thread stopped, the
// fault's registers as they are), written beside the others as core.PID (core.PID.N when taken).
void NativeDebugger::State::writeCrashCore(const engine::EngineStop& event) {
  std::string path = coreDir + "/core." + std::to_string(event.pid);
  for (int n = 1; ::access(path.c_str(), F_OK) == 0 && n < 1000; ++n)
    path = coreDir + "/core." + std::to_string(event.pid) + "." + std::to_string(n);
  auto written = core::writeCore(*engine, event.pid, path, &event.signal, event.tid);
  std::string line = written ? "Core of process " + std::to_string(event.pid) + " written to " + path + " (" +
                                   std::to_string((written->bytes + 500000) / 1000000) + " MB, " +
                                   std::to_string(static_cast<int>(written->heldSeconds * 1000)) + " ms): strata core " + path + "\n"
                             : "The core of process " + std::to_string(event.pid) + " could not be written to " + path + ": " +
                                   written.error().message + "\n";
  if (callbacks.output) emit([this, line] { callbacks.output(line); });
}

void NativeDebugger::State::onExited(const engine::ExitEvent& event) {
  forgetStop();
  step.reset();
  entryCatch.clear();
  for (auto& [id, bp] : breakpoints) bp->sites.clear(), bp->addresses.clear();
  siteOwner.clear();
  forgetGpuErrors({});
  for (const auto& m : std::vector<sym::Module>(modules.modules())) modules.remove(m.object.path);
  if (callbacks.exited)
    emit([this, event] { callbacks.exited(event); });
}

void NativeDebugger::State::onThreadStarted(pid_t, pid_t tid) {
  if (callbacks.thread) emit([this, tid] { callbacks.thread(tid, true); });
}

void NativeDebugger::State::onThreadExited(pid_t, pid_t tid) {
  stacks.erase(tid);
  if (callbacks.thread) emit([this, tid] { callbacks.thread(tid, false); });
}

std::string locateEngine(const std::string& executable) {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("STRATA_ENGINE"); env && *env) return env;
  if (executable.empty()) return {};
  fs::path dir = fs::path(executable).parent_path();
  // Beside strata-dap (the build tree, bin/ of an install); the CLI sits one level down in the
  // build tree; an install keeps helpers in lib/strata/.
  for (const fs::path& p : {dir / "strata-engine", dir.parent_path() / "strata-engine",
                            dir.parent_path() / "lib" / "strata" / "strata-engine"})
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  return {};
}

NativeDebugger::NativeDebugger(Callbacks callbacks, std::string engineProgram)
    : state_(std::make_unique<State>(std::move(callbacks), engineProgram)) {}

NativeDebugger::~NativeDebugger() = default;

pid_t NativeDebugger::pid() const { return state_->engine->pid(); }

std::future<Result<pid_t>> NativeDebugger::launch(engine::LaunchOptions options, Done<pid_t> done) {
  State* s = state_.get();
  return s->onEngine<pid_t>([s, options = std::move(options)]() mutable {
    s->holding = true;
    s->attached = false;
    return s->engine->launch(std::move(options)).get();  // on the engine thread: runs at once
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::attach(pid_t pid, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, pid]() {
    s->holding = true;
    s->attached = true;
    return s->engine->attach(pid).get();  // on the engine thread: runs at once
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::configurationDone(bool stopOnEntry, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, stopOnEntry]() -> Result<void> {
    if (!s->holding) return Error{errors::kNothingToConfigure, "configurationDone: no launch or attach is waiting for it", true};
    s->holding = false;
    if (s->engine->pid() == 0) return Error{errors::kNoProcess, "configurationDone: the process is gone", true};
    if (stopOnEntry) {
      // A launched process stops before any of its code ran; an attached one where it was.
      DebuggerStop info;
      info.tid = s->lastTid;
      info.reason = s->attached ? DebuggerStopReason::Attach : DebuggerStopReason::Entry;
      s->report(info);
      return {};
    }
    return s->engine->resume().get();
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::detach(Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s]() -> Result<void> {
    s->forgetStop();
    s->step.reset();
    auto r = s->engine->detach().get();
    for (auto& [id, bp] : s->breakpoints) bp->sites.clear(), bp->addresses.clear();
    s->siteOwner.clear();
    s->forgetGpuErrors({});  // the engine removed the hidden breakpoints with the others
    s->entryCatch.clear();
    return r;
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::terminate(Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s]() { return s->engine->kill().get(); }, std::move(done));
}

std::future<Result<void>> NativeDebugger::resume(Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s]() -> Result<void> {
    s->forgetStop();
    s->step.reset();
    return s->engine->resume().get();
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::pause(Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s]() { return s->engine->pause().get(); }, std::move(done));
}

std::future<Result<void>> NativeDebugger::next(pid_t tid, StepGranularity granularity, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, tid, granularity]() {
    return s->startStep(tid, granularity == StepGranularity::Instruction ? StepKind::InstructionOver : StepKind::Over);
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::stepIn(pid_t tid, StepGranularity granularity, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, tid, granularity]() {
    return s->startStep(tid, granularity == StepGranularity::Instruction ? StepKind::Instruction : StepKind::In);
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::stepOut(pid_t tid, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, tid]() { return s->startStep(tid, StepKind::Out); }, std::move(done));
}

std::future<Result<std::vector<engine::ThreadEntry>>> NativeDebugger::threads(Done<std::vector<engine::ThreadEntry>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<engine::ThreadEntry>>([s] { return s->engine->threads().get(); }, std::move(done));
}

std::future<Result<FramePage>> NativeDebugger::stackTrace(pid_t tid, std::size_t startFrame, std::size_t levels, Done<FramePage> done) {
  State* s = state_.get();
  return s->onEngine<FramePage>([s, tid, startFrame, levels]() { return s->stackPage(tid, startFrame, levels); }, std::move(done));
}

std::future<Result<FramePage>> NativeDebugger::sampleStack(pid_t tid, std::size_t levels,
                                                           std::function<void()> alsoWhileStopped, Done<FramePage> done) {
  State* s = state_.get();
  return s->onEngine<FramePage>([s, tid, levels, also = std::move(alsoWhileStopped)]() -> Result<FramePage> {
    // Already unwound at this stop: that stack. Else it is read and forgotten.
    if (s->stacks.count(tid)) return s->stackPage(tid, 0, levels);
    FramePage page;
    auto r = s->engine->whileStopped([&]() -> Result<void> {
      auto p = s->stackPage(tid, 0, levels);
      if (also) also();
      s->stacks.erase(tid);
      for (auto it = s->frameIds.begin(); it != s->frameIds.end();)
        it = it->first.first == tid ? s->frameIds.erase(it) : std::next(it);
      for (auto it = s->frames.begin(); it != s->frames.end();)
        it = it->second.tid == tid ? s->frames.erase(it) : std::next(it);
      if (!p) return p.takeError();
      page = std::move(*p);
      for (auto& f : page.frames) f.id = 0;
      return {};
    }).get();
    if (!r) return r.takeError();
    return page;
  }, std::move(done));
}

std::future<Result<std::vector<Scope>>> NativeDebugger::scopes(int frameId, Done<std::vector<Scope>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<Scope>>([s, frameId]() -> Result<std::vector<Scope>> {
    if (!s->frames.count(frameId))
      return Error{errors::kUnknownFrame, "scopes: frame " + std::to_string(frameId) + " is unknown or from an earlier stop", true};
    std::vector<Scope> out;
    const char* names[] = {"Locals", "Globals", "Registers"};
    VariableHandle::Kind kinds[] = {VariableHandle::Kind::Locals, VariableHandle::Kind::Globals,
                                    VariableHandle::Kind::Registers};
    for (int i = 0; i < 3; ++i) {
      int ref = s->nextHandle++;
      s->handles[ref] = VariableHandle{kinds[i], frameId, {}};
      out.push_back(Scope{names[i], ref, i == 1});
    }
    return out;
  }, std::move(done));
}

std::future<Result<std::vector<Variable>>> NativeDebugger::variables(int ref, VariableFilter filter,
                                                                     std::uint64_t start, std::uint64_t count, Done<std::vector<Variable>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<Variable>>(
      [s, ref, filter, start, count]() { return s->variablesOf(ref, filter, start, count); }, std::move(done));
}

std::future<Result<Variable>> NativeDebugger::evaluate(std::string expression, int frameId, Done<Variable> done) {
  State* s = state_.get();
  return s->onEngine<Variable>([s, expression, frameId]() { return s->evaluateIn(expression, frameId); }, std::move(done));
}

std::future<Result<Variable>> NativeDebugger::setVariable(int ref, std::string name, std::string value, Done<Variable> done) {
  State* s = state_.get();
  return s->onEngine<Variable>([s, ref, name, value]() { return s->setVariableIn(ref, name, value); }, std::move(done));
}

std::future<Result<std::vector<std::uint8_t>>> NativeDebugger::readMemory(std::uint64_t address, std::size_t size, Done<std::vector<std::uint8_t>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<std::uint8_t>>([s, address, size]() -> Result<std::vector<std::uint8_t>> {
    std::vector<std::uint8_t> bytes(size);
    if (size == 0) return bytes;
    auto r = s->engine->memory().read(address, bytes.data(), size);
    if (!r) return r.takeError();
    return bytes;
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::writeMemory(std::uint64_t address, std::vector<std::uint8_t> bytes, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, address, bytes]() -> Result<void> {
    if (bytes.empty()) return {};
    return s->engine->memory().write(address, bytes.data(), bytes.size());
  }, std::move(done));
}

std::future<Result<std::vector<DisassembledInstruction>>> NativeDebugger::disassemble(std::uint64_t address,
                                                                                       std::size_t count, Done<std::vector<DisassembledInstruction>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<DisassembledInstruction>>(
      [s, address, count]() { return s->disassembleAt(address, count); }, std::move(done));
}

}  // namespace strata::native::debugger
