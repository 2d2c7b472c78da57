// Line and instruction stepping over the engine's range steps: frames told apart by their CFA.
#include <cstdio>
#include <utility>

#include "internal.hpp"

namespace strata::native::debugger {

using State = NativeDebugger::State;

namespace {
constexpr int kMaxStepRounds = 100000;  // a step that never settles ends as a plain stop
}

std::uint64_t State::frameCfa(const ThreadRegisters& regs) {
  const sym::Module* module = modules.moduleFor(regs.gpr.rip);
  if (module && module->symbols) {
    if (auto cfa = sym::cfaFromCfi(*module->symbols, regs.gpr.rip - module->object.loadBias, sym::registersFrom(regs)))
      return *cfa;
  }
  return regs.gpr.rsp;  // no CFI: the stack pointer still orders frames of one thread
}

Result<engine::ReturnTarget> State::returnTarget(pid_t tid) {
  if (!unwinder) {
    auto created = sym::RemoteUnwinder::create();
    if (!created) return created.takeError();
    unwinder = std::move(created).value();
  }
  auto regs = engine->registers(tid).get();
  if (!regs) return Error{regs.error().id, "step out: " + regs.error().message, true};
  auto raw = unwinder->unwind(tid, 2, &*regs);
  if (!raw) return Error{raw.error().id, "step out: " + raw.error().message, true};
  if (raw->size() < 2 || !(*raw)[0].cfaKnown)
    return Error{errors::kNoCaller, "step out: the outermost frame has no caller to return to", true};
  return engine::ReturnTarget{(*raw)[1].pc, (*raw)[0].cfa};
}

// The function a PLT stub at `pc` jumps to, when it has line info: the bound GOT slot, or
// before the dynamic linker bound it, the stub's symbol as another module defines it.
std::optional<std::uint64_t> State::pltTarget(const sym::Module& module, std::uint64_t pc) {
  if (!module.symbols) return std::nullopt;
  std::uint64_t bias = module.object.loadBias;
  auto stub = module.symbols->pltStubAt(pc - bias);
  if (!stub) return std::nullopt;
  auto hasLines = [&](std::uint64_t address) {
    const sym::Module* m = modules.moduleFor(address);
    return m && m->symbols && m->symbols->hasDebugInfo() &&
           m->symbols->lineRange(address - m->object.loadBias).has_value();
  };
  std::uint64_t slot = 0;
  if (engine->memory().read(stub->gotSlot + bias, &slot, sizeof slot) && modules.moduleFor(slot) != nullptr) {
    // Bound: to another module, or to this one (a C++ template or inline function of a shared
    // library goes through its own PLT, being interposable).
    if (hasLines(slot)) return slot;
    if (modules.moduleFor(slot) != &module) return std::nullopt;
  }
  if (stub->symbol.empty()) return std::nullopt;
  // Not bound yet (lazy binding): the slot still points into our own PLT. The definition the
  // dynamic linker would pick: another module's first, else this module's own.
  std::string name = sym::demangle(stub->symbol);
  std::optional<std::uint64_t> own;
  for (const sym::Module& m : modules.modules()) {
    if (!m.symbols) continue;
    auto defined = m.symbols->elfSymbolNamed(name);
    if (!defined || defined->ifunc || defined->size == 0) continue;
    std::uint64_t address = defined->address + m.object.loadBias;
    if (&m == &module) {
      own = address;
      continue;
    }
    return hasLines(address) ? std::optional<std::uint64_t>(address) : std::nullopt;
  }
  if (own && hasLines(*own)) return own;
  return std::nullopt;
}

Result<void> State::startStep(pid_t tid, StepKind kind) {
  forgetStop();
  step.reset();
  if (kind == StepKind::Instruction || kind == StepKind::InstructionOver) {
    step = StepOperation{};
    step->tid = tid;
    step->kind = kind;
    if (kind == StepKind::InstructionOver) {
      // next by instruction on a call: after the step into the callee, run on to the return.
      auto regs = engine->registers(tid).get();
      if (!regs) return Error{regs.error().id, "step: " + regs.error().message, true};
      std::uint64_t pc = regs->gpr.rip;
      auto ins = disassembleAt(pc, 1);
      if (ins && !ins->empty() && ins->front().instruction.rfind("call", 0) == 0)
        step->callReturn = pc + (ins->front().bytes.size() + 1) / 3;  // bytes: "e8 01 02 03 04"
    }
    return engine->stepInstruction(tid).get();
  }
  if (kind == StepKind::Out) {
    auto target = returnTarget(tid);
    if (!target) return target.takeError();
    step = StepOperation{};
    step->tid = tid;
    step->kind = kind;
    return engine->stepOut(tid, *target).get();
  }
  auto regs = engine->registers(tid).get();
  if (!regs) return Error{regs.error().id, "step: " + regs.error().message, true};
  std::uint64_t pc = regs->gpr.rip;
  const sym::Module* module = modules.moduleFor(pc);
  std::optional<sym::LineRange> range;
  if (module && module->symbols && module->symbols->hasDebugInfo())
    range = module->symbols->lineRange(pc - module->object.loadBias);
  StepOperation op;
  op.tid = tid;
  op.kind = kind;
  op.cfa = frameCfa(*regs);
  if (!range) {
    // No line information here: run to the caller, which hopefully has some.
    auto target = returnTarget(tid);
    if (!target) return target.takeError();
    op.kind = StepKind::Out;
    step = op;
    return engine->stepOut(tid, *target).get();
  }
  op.line = range->location.line;
  op.file = range->location.file;
  step = op;
  std::uint64_t bias = module->object.loadBias;
  return engine->stepRange(tid, range->low + bias, range->high + bias, kind == StepKind::Over).get();
}

bool State::continueStep(const engine::EngineStop& event) {
  StepOperation& op = *step;
  if (op.kind == StepKind::IntoTarget) {
    if (event.tid != op.tid) return false;
    auto regs = engine->registers(op.tid).get();
    if (!regs) return false;
    return enterTarget(op, regs->gpr.rip).ok();
  }
  if (op.kind == StepKind::InstructionOver) {
    if (event.tid != op.tid || op.callReturn == 0) return false;
    std::uint64_t ret = std::exchange(op.callReturn, 0);
    auto regs = engine->registers(op.tid).get();
    std::uint64_t top = 0;
    if (!regs || !engine->memory().read(regs->gpr.rsp, &top, sizeof top) || top != ret) return false;
    return engine->stepOut(op.tid, engine::ReturnTarget{ret, regs->gpr.rsp + 8}).get().ok();
  }
  if (event.tid != op.tid || op.kind == StepKind::Instruction || op.kind == StepKind::Out || op.inPrologue ||
      ++op.rounds > kMaxStepRounds)
    return false;
  auto regs = engine->registers(op.tid).get();
  if (!regs) return false;
  std::uint64_t pc = regs->gpr.rip;
  std::uint64_t cfa = frameCfa(*regs);
  const sym::Module* module = modules.moduleFor(pc);
  std::optional<sym::LineRange> range;
  std::uint64_t bias = module ? module->object.loadBias : 0;
  if (module && module->symbols && module->symbols->hasDebugInfo()) range = module->symbols->lineRange(pc - bias);

  auto keepStepping = [&](std::uint64_t low, std::uint64_t high, bool overCalls) {
    return engine->stepRange(op.tid, low, high, overCalls).get().ok();
  };

  if (!range || range->location.line == 0) {
    if (cfa < op.cfa) {
      // stepIn into a PLT stub: on to the function behind it when that one has line info
      // (its entry is reached with the stub's stack pointer).
      if (op.kind == StepKind::In && !op.throughPlt && module) {
        if (auto callee = pltTarget(*module, pc)) {
          op.throughPlt = true;
          return engine->stepOut(op.tid, engine::ReturnTarget{*callee, regs->gpr.rsp}).get().ok();
        }
      }
      // Stepped into code without line info (a PLT stub, libc): back out to the caller's line.
      auto target = returnTarget(op.tid);
      if (!target) return false;
      return engine->stepOut(op.tid, *target).get().ok();
    }
    if (range) return keepStepping(range->low + bias, range->high + bias, true);
    return false;
  }
  if (cfa < op.cfa) {
    // A new, deeper frame: stepIn lands after the callee's prologue, where its locals are set.
    if (op.kind != StepKind::In) return false;
    auto fn = module->symbols->functionAt(pc - bias);
    if (fn && fn->hasDebugInfo && pc - bias == fn->entry) {
      std::uint64_t body = module->symbols->afterPrologue(*fn);
      if (body > fn->entry) {
        op.inPrologue = true;
        return keepStepping(pc, body + bias, true);
      }
    }
    return false;
  }
  bool sameLine = range->location.line == op.line && range->location.file == op.file;
  if (cfa == op.cfa && sameLine) return keepStepping(range->low + bias, range->high + bias, op.kind == StepKind::Over);
  if (cfa > op.cfa && pc - bias != range->low) {
    // Returned into the middle of the caller's line: finish that line as a `next` would.
    op.cfa = cfa;
    op.line = range->location.line;
    op.file = range->location.file;
    return keepStepping(range->low + bias, range->high + bias, true);
  }
  return false;
}

// One stop of a stepInto: before the call, run to it; at it, step into the callee; in the
// callee's first instruction, run its prologue. An error (or leaving the line another way) ends it.
Result<void> State::enterTarget(StepOperation& op, std::uint64_t pc) {
  if (!op.atCall) {
    if (pc != op.callAddress) return Error{errors::kStepTargetMissed, "the line was left before the call", false};
    op.atCall = true;
    return engine->stepInstruction(op.tid).get();
  }
  op.kind = StepKind::In;
  op.atCall = false;
  const sym::Module* module = modules.moduleFor(pc);
  if (!module || !module->symbols) return Error{errors::kStepTargetMissed, "no symbols at the callee", false};
  std::uint64_t bias = module->object.loadBias;
  auto fn = module->symbols->functionAt(pc - bias);
  if (!fn || !fn->hasDebugInfo || pc - bias != fn->entry) return Error{errors::kStepTargetMissed, "no prologue to run", false};
  std::uint64_t body = module->symbols->afterPrologue(*fn);
  if (body <= fn->entry) return Error{errors::kStepTargetMissed, "no prologue to run", false};
  op.inPrologue = true;
  return engine->stepRange(op.tid, pc, body + bias, true).get();
}

std::future<Result<std::vector<StepInTarget>>> NativeDebugger::stepInTargets(int frameId, Done<std::vector<StepInTarget>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<StepInTarget>>([s, frameId]() -> Result<std::vector<StepInTarget>> {
    auto it = s->frames.find(frameId);
    if (it == s->frames.end())
      return Error{errors::kUnknownFrame, "stepInTargets: frame " + std::to_string(frameId) + " is unknown or from an earlier stop", true};
    const FrameRef ref = it->second;
    if (ref.frame.physicalIndex != 0 || ref.frame.inlined)
      return Error{errors::kNotInnermostFrame, "stepInTargets: only the innermost frame of a thread can step in", true};
    std::uint64_t pc = ref.frame.pc;
    const sym::Module* module = s->modules.moduleFor(pc);
    if (!module || !module->symbols || !module->symbols->hasDebugInfo()) return std::vector<StepInTarget>{};
    std::uint64_t bias = module->object.loadBias;
    auto range = module->symbols->lineRange(pc - bias);
    if (!range) return std::vector<StepInTarget>{};
    std::uint64_t end = range->high + bias;
    if (!s->disassembler) {
      auto created = sym::Disassembler::create();
      if (!created) return created.takeError();
      s->disassembler = std::move(created).value();
    }
    auto list = s->disassembler->disassemble(s->engine->memory(), s->modules, pc, end > pc ? end - pc : 0);
    if (!list) return list.takeError();
    std::vector<StepInTarget> out;
    std::map<std::string, int> seen;
    for (const auto& ins : *list) {
      if (ins.address >= end) break;
      if (ins.mnemonic.rfind("call", 0) != 0) continue;
      std::uint64_t target = 0;
      if (std::sscanf(ins.operands.c_str(), "0x%lx", &target) != 1) continue;  // indirect call
      std::string label;
      if (const sym::Module* callee = s->modules.moduleFor(target); callee && callee->symbols) {
        if (auto fn = callee->symbols->functionAt(target - callee->object.loadBias); fn && fn->entry + callee->object.loadBias == target)
          label = fn->name;
      }
      if (label.empty()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(target));
        label = buf;
      }
      int n = ++seen[label];
      StepInTarget t;
      t.id = s->nextStepTarget++;
      t.label = n > 1 ? label + " (call " + std::to_string(n) + ")" : label;
      t.callAddress = ins.address;
      t.targetAddress = target;
      t.line = range->location.line;
      s->stepTargets[t.id] = {ref.tid, t};
      out.push_back(std::move(t));
    }
    return out;
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::stepInto(pid_t tid, int targetId, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, tid, targetId]() -> Result<void> {
    auto it = s->stepTargets.find(targetId);
    if (it == s->stepTargets.end())
      return Error{errors::kUnknownStepTarget, "stepIn: target " + std::to_string(targetId) + " is unknown or from an earlier stop", true};
    if (it->second.first != tid)
      return Error{errors::kUnknownStepTarget, "stepIn: target " + std::to_string(targetId) + " belongs to thread " +
                          std::to_string(it->second.first), true};
    std::uint64_t callAddress = it->second.second.callAddress;
    auto regs = s->engine->registers(tid).get();
    if (!regs) return regs.takeError();
    std::uint64_t pc = regs->gpr.rip;
    s->forgetStop();
    StepOperation op;
    op.tid = tid;
    op.kind = StepKind::IntoTarget;
    op.callAddress = callAddress;
    op.cfa = s->frameCfa(*regs);
    s->step = op;
    if (pc == callAddress) return s->enterTarget(*s->step, pc);
    return s->engine->stepRange(tid, pc, callAddress, true).get();
  }, std::move(done));
}

}  // namespace strata::native::debugger
