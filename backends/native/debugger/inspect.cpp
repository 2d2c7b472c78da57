// Inspection at a stop: paged stacks, scopes and variables behind per-stop handles, evaluate,
// setVariable and disassembly.
#include <cstdio>

#include "convert.hpp"
#include "internal.hpp"

namespace strata::native::debugger {

using State = NativeDebugger::State;

void State::forgetStop() {
  stacks.clear();
  frameIds.clear();
  frames.clear();
  handles.clear();
  stepTargets.clear();
  gpuCallers.clear();
}

Result<FramePage> State::stackPage(pid_t tid, std::size_t start, std::size_t levels) {
  auto it = stacks.find(tid);
  if (it == stacks.end()) {
    if (!unwinder) {
      auto created = sym::RemoteUnwinder::create();
      if (!created) return created.takeError();
      unwinder = std::move(created).value();
    }
    // The engine's copy of the registers: the tracer may be another process (strata-engine).
    auto regs = engine->registers(tid).get();
    if (!regs) return Error{regs.error().id, "stack of thread " + std::to_string(tid) + ": " + regs.error().message, true};
    auto raw = unwinder->unwind(tid, modules, 4096, &*regs);
    if (!raw) return Error{raw.error().id, "stack of thread " + std::to_string(tid) + ": " + raw.error().message, true};
    it = stacks.emplace(tid, std::make_unique<sym::StackView>(fromProgramCall(tid, std::move(raw).value()), modules)).first;
  }
  sym::StackView& view = *it->second;
  FramePage page;
  page.totalFrames = view.totalFrames();
  if (levels == 0) levels = page.totalFrames;
  auto list = view.frames(start, levels);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const sym::Frame& f = list[i];
    auto key = std::make_pair(tid, start + i);
    auto known = frameIds.find(key);
    int id = known != frameIds.end() ? known->second : nextFrameId++;
    if (known == frameIds.end()) {
      frameIds[key] = id;
      frames[id] = FrameRef{tid, f, nullptr};
    }
    page.frames.push_back(toFrameEntry(f, id));
    if (const auto& raw = view.raw(f.physicalIndex); raw.cfaKnown) page.frames.back().cfa = raw.cfa;
  }
  return page;
}

Result<std::shared_ptr<const sym::FrameContext>> State::frameContext(int frameId) {
  auto it = frames.find(frameId);
  if (it == frames.end())
    return Error{errors::kUnknownFrame, "frame " + std::to_string(frameId) + " is unknown or from an earlier stop", true};
  FrameRef& ref = it->second;
  if (!ref.context) {
    auto stack = stacks.find(ref.tid);
    if (stack == stacks.end()) return Error{errors::kUnknownFrame, "frame " + std::to_string(frameId) + ": its stack is gone", true};
    auto made = sym::makeFrameContext(*stack->second, ref.frame, engine->memory());
    if (!made) return made.takeError();
    ref.context = std::move(made).value();
  }
  return ref.context;
}

Variable State::describe(const sym::Value& value, int frameId) {
  Variable v = toVariable(value);
  if (v.namedChildren + v.indexedChildren > 0) {
    v.variablesReference = nextHandle++;
    handles[v.variablesReference] = VariableHandle{VariableHandle::Kind::Children, frameId, value};
  }
  return v;
}

Result<std::vector<Variable>> State::variablesOf(int ref, VariableFilter filter, std::uint64_t start,
                                                 std::uint64_t count) {
  auto it = handles.find(ref);
  if (it == handles.end())
    return Error{errors::kUnknownReference, "variables: reference " + std::to_string(ref) + " is unknown or from an earlier stop", true};
  VariableHandle handle = it->second;
  std::vector<Variable> out;
  if (handle.kind == VariableHandle::Kind::Children) {
    auto childFilter = filter == VariableFilter::Named     ? sym::ChildFilter::Named
                       : filter == VariableFilter::Indexed ? sym::ChildFilter::Indexed
                                                           : sym::ChildFilter::All;
    // Without a count, a bounded page: a 100k-element vector must not be read in one request.
    auto list = sym::children(handle.value, childFilter, start, count ? count : 1000);
    if (!list) return list.takeError();
    for (auto& v : *list) out.push_back(describe(v, handle.frameId));
    return out;
  }
  auto frame = frameContext(handle.frameId);
  if (!frame) return frame.takeError();
  if (handle.kind == VariableHandle::Kind::Registers) {
    auto ref0 = frames.at(handle.frameId);
    std::vector<std::pair<std::string, std::string>> regs;
    if (ref0.frame.physicalIndex == 0 && !ref0.frame.inlined) {
      auto live = engine->registers(ref0.tid).get();
      if (!live) return live.takeError();
      regs = sym::registersOf(*live);
    } else {
      regs = sym::registersOf(**frame);
    }
    for (auto& [name, value] : regs) out.push_back(registerVariable(name, value));
    return out;
  }
  auto list = handle.kind == VariableHandle::Kind::Locals ? sym::localsOf(*frame) : sym::globalsOf(*frame);
  if (!list) return list.takeError();
  std::uint64_t end = count ? std::min<std::uint64_t>(list->size(), start + count) : list->size();
  for (std::uint64_t i = start; i < end; ++i) out.push_back(describe((*list)[i], handle.frameId));
  return out;
}

Result<Variable> State::setVariableIn(int ref, const std::string& name, const std::string& text) {
  auto it = handles.find(ref);
  if (it == handles.end())
    return Error{errors::kUnknownReference, "setVariable: reference " + std::to_string(ref) + " is unknown or from an earlier stop", true};
  VariableHandle handle = it->second;
  std::vector<sym::Value> candidates;
  if (handle.kind == VariableHandle::Kind::Children) {
    unsigned long long index = 0;
    char tail = 0;
    bool indexed = std::sscanf(name.c_str(), "[%llu%c", &index, &tail) == 2 && tail == ']';
    auto list = indexed ? sym::children(handle.value, sym::ChildFilter::Indexed, index, 1)
                        : sym::children(handle.value, sym::ChildFilter::Named, 0, 100000);
    if (!list) return list.takeError();
    candidates = std::move(list).value();
  } else if (handle.kind == VariableHandle::Kind::Registers) {
    return Error{errors::kNotAssignable, "setVariable: registers cannot be set here", true};
  } else {
    auto frame = frameContext(handle.frameId);
    if (!frame) return frame.takeError();
    auto list = handle.kind == VariableHandle::Kind::Locals ? sym::localsOf(*frame) : sym::globalsOf(*frame);
    if (!list) return list.takeError();
    candidates = std::move(list).value();
  }
  for (auto& v : candidates) {
    if (v.name != name) continue;
    auto shown = sym::setValue(v, text);
    if (!shown) return Error{shown.error().id, "setVariable " + name + ": " + shown.error().message, true};
    return describe(v, handle.frameId);
  }
  return Error{errors::kUnknownName, "setVariable: no variable named '" + name + "' here", true};
}

Result<Variable> State::evaluateIn(const std::string& text, int frameId) {
  std::shared_ptr<const sym::FrameContext> frame;
  if (frameId == 0) {
    if (lastTid == 0) return Error{errors::kNotStopped, "evaluate: the program is not stopped", true};
    auto regs = engine->registers(lastTid).get();
    if (!regs) return Error{regs.error().id, "evaluate: " + regs.error().message, true};
    auto made = sym::makeTopFrameContext(modules, *regs, engine->memory());
    if (!made) return Error{made.error().id, "evaluate: " + made.error().message, true};
    frame = std::move(made).value();
  } else {
    auto made = frameContext(frameId);
    if (!made) return made.takeError();
    frame = std::move(made).value();
  }
  auto parsed = sym::Expression::parse(text);
  if (!parsed) return Error{parsed.error().id, "evaluate '" + text + "': " + parsed.error().message, true};
  auto value = parsed->evaluate(frame);
  if (!value) return Error{value.error().id, "evaluate '" + text + "': " + value.error().message, true};
  if (value->name.empty()) value->name = text;
  if (value->expression.empty()) value->expression = text;
  return describe(*value, frameId);
}

Result<std::vector<DisassembledInstruction>> State::disassembleAt(std::uint64_t address, std::size_t count) {
  if (!disassembler) {
    auto created = sym::Disassembler::create();
    if (!created) return created.takeError();
    disassembler = std::move(created).value();
  }
  auto list = disassembler->disassemble(engine->memory(), modules, address, count);
  if (!list) return list.takeError();
  std::vector<DisassembledInstruction> out;
  for (auto& ins : *list) out.push_back(toDisassembled(ins));
  return out;
}

namespace {
DisassembledInstruction unreadableAt(std::uint64_t address) {
  DisassembledInstruction d;
  d.address = address;
  d.instruction = "??";
  return d;
}
}  // namespace

Result<std::vector<DisassembledInstruction>> disassembleWindow(sym::Disassembler& disassembler, MemoryAccess& memory,
                                                               const sym::ModuleMap& modules, std::uint64_t address,
                                                               std::int64_t instructionOffset, std::size_t count) {
  constexpr std::size_t kMax = 10000;
  if (count > kMax) return Error{errors::kRequestTooLarge, "disassemble: at most " + std::to_string(kMax) + " instructions at once", true};
  auto decode = [&](std::uint64_t at, std::size_t n) -> Result<std::vector<DisassembledInstruction>> {
    auto list = disassembler.disassemble(memory, modules, at, n);
    if (!list) return list.takeError();
    std::vector<DisassembledInstruction> out;
    for (auto& ins : *list) out.push_back(toDisassembled(ins));
    return out;
  };
  std::vector<DisassembledInstruction> out;
  if (count == 0) return out;
  std::uint64_t start = address;
  std::size_t skip = 0;
  if (instructionOffset < 0) {
    // x86 has no way back: decode forward from the function's start (or a guess well before
    // the address) and keep the instructions that end exactly at it.
    std::size_t back = static_cast<std::size_t>(-instructionOffset);
    std::uint64_t from = address > back * 15 ? address - back * 15 : 0;
    if (const sym::Module* m = modules.moduleFor(address); m && m->symbols) {
      if (auto fn = m->symbols->functionAt(address - m->object.loadBias)) {
        std::uint64_t entry = fn->low ? fn->low + m->object.loadBias : fn->entry + m->object.loadBias;
        if (entry <= address && address - entry <= back * 15 + 4096) from = entry;
      }
    }
    std::vector<DisassembledInstruction> before;
    if (from < address) {
      auto list = decode(from, static_cast<std::size_t>(address - from));
      if (list)
        for (auto& ins : *list)
          if (ins.address < address) before.push_back(std::move(ins));
      // A guess that does not land on the address decoded garbage: trust nothing then.
      if (!list || before.empty() ||
          before.back().address + (before.back().bytes.size() + 1) / 3 != address)
        before.clear();
    }
    std::size_t have = std::min(before.size(), back);
    for (std::size_t i = have; i < back; ++i) {
      std::uint64_t a = address - (back - i);  // placeholders below what could be decoded
      out.push_back(unreadableAt(a));
    }
    if (have < back && !out.empty()) {
      // Keep addresses increasing: the placeholders sit below the first real instruction.
      std::uint64_t first = have ? before[before.size() - have].address : address;
      for (std::size_t i = 0; i < out.size(); ++i) out[i].address = first - (out.size() - i);
    }
    for (std::size_t i = before.size() - have; i < before.size(); ++i) out.push_back(before[i]);
    if (out.size() >= count) {
      out.resize(count);
      return out;
    }
  } else {
    skip = static_cast<std::size_t>(instructionOffset);
  }
  std::size_t want = count - out.size() + skip;
  auto list = decode(start, want);
  std::vector<DisassembledInstruction> after = list ? std::move(list).value() : std::vector<DisassembledInstruction>{};
  for (std::size_t i = skip; i < after.size() && out.size() < count; ++i) out.push_back(after[i]);
  std::uint64_t next = address;
  if (!out.empty())
    next = out.back().instruction == "??" ? out.back().address + 1
                                          : out.back().address + (out.back().bytes.size() + 1) / 3;
  while (out.size() < count) out.push_back(unreadableAt(next++));
  return out;
}

std::future<Result<std::vector<DisassembledInstruction>>> NativeDebugger::disassembleAround(
    std::uint64_t address, std::int64_t instructionOffset, std::size_t count, Done<std::vector<DisassembledInstruction>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<DisassembledInstruction>>(
      [s, address, instructionOffset, count]() -> Result<std::vector<DisassembledInstruction>> {
        if (!s->disassembler) {
          auto created = sym::Disassembler::create();
          if (!created) return created.takeError();
          s->disassembler = std::move(created).value();
        }
        return disassembleWindow(*s->disassembler, s->engine->memory(), s->modules, address, instructionOffset, count);
      }, std::move(done));
}

std::future<Result<std::vector<std::uint8_t>>> NativeDebugger::readMemoryPrefix(std::uint64_t address,
                                                                               std::size_t size, Done<std::vector<std::uint8_t>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<std::uint8_t>>([s, address, size]() -> Result<std::vector<std::uint8_t>> {
    std::vector<std::uint8_t> bytes(size);
    std::size_t done = 0;
    while (done < size) {
      std::uint64_t at = address + done;
      std::size_t chunk = std::min<std::size_t>(size - done, 4096 - (at % 4096));
      if (!s->engine->memory().read(at, bytes.data() + done, chunk)) break;
      done += chunk;
    }
    bytes.resize(done);
    return bytes;
  }, std::move(done));
}

}  // namespace strata::native::debugger
