// Mixed mode's way into C/C++ from outside (a Python step into an extension function): for one
// thread, a breakpoint at the first line of every function of the program's own code, taken
// down at the next stop. The own functions of a module are found once (a walk over its
// compilation units) and kept by path.
#include <gelf.h>

#include <algorithm>
#include <cstring>

#include "internal.hpp"

namespace strata::native::debugger {

using State = NativeDebugger::State;

std::vector<std::uint64_t> State::ownEntriesOf(const sym::Module& module, const OwnCode& own) {
  auto it = ownEntries.find(module.object.path);
  if (it != ownEntries.end()) return it->second;
  std::vector<std::uint64_t>& out = ownEntries[module.object.path];
  sym::ObjectSymbols& symbols = *module.symbols;
  Dwarf* dwarf = symbols.dwarf();
  if (dwarf == nullptr) return out;
  for (Dwarf_Off offset : symbols.cuOffsets()) {
    Dwarf_Die cu;
    if (dwarf_offdie(dwarf, offset, &cu) == nullptr) continue;
    for (const sym::FunctionInfo& f : symbols.functionsOfCu(&cu)) {
      if (!f.hasDebugInfo || f.inlinedCopy || f.low != f.entry) continue;  // one site per function
      std::uint64_t at = symbols.afterPrologue(f);
      auto where = symbols.locationForAddress(at);
      if (where && where->line > 0 && own.file(where->file)) out.push_back(at);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void State::dropEntryCatch() {
  for (engine::BreakpointId id : std::exchange(entryCatch, {})) (void)engine->removeBreakpoint(id).get();
}

bool State::onlyEntryCatch(const engine::EngineStop& event) const {
  if (event.reason != engine::EngineStopReason::Breakpoint || event.breakpoints.empty() || entryCatch.empty())
    return false;
  return std::all_of(event.breakpoints.begin(), event.breakpoints.end(), [&](engine::BreakpointId id) {
    return std::find(entryCatch.begin(), entryCatch.end(), id) != entryCatch.end();
  });
}

std::future<Result<std::size_t>> NativeDebugger::catchEntry(pid_t tid, OwnCode own, std::uint64_t returnTo,
                                                            std::uint64_t returnSp, Done<std::size_t> done) {
  State* s = state_.get();
  return s->onEngine<std::size_t>([s, tid, own = std::move(own), returnTo, returnSp]() -> Result<std::size_t> {
    s->dropEntryCatch();
    if (returnTo) {
      engine::HitRule rule;
      rule.thread = tid;
      rule.stackPointer = returnSp;
      auto id = s->engine->addBreakpoint(returnTo, [tid, returnSp](const engine::HitContext& hit) {
                            return hit.tid == tid && (!returnSp || !hit.registers || hit.registers->gpr.rsp == returnSp);
                          }, rule).get();
      if (!id) return Error{id.error().id, "step back to own code: " + id.error().message, true};
      s->entryCatch.push_back(*id);
    }
    // Copied: adding a breakpoint may stop the process, and a library event may change the list.
    std::vector<sym::Module> modules = s->modules.modules();
    for (const sym::Module& m : modules) {
      if (!m.symbols || !m.symbols->hasDebugInfo() || !own.module(m.object.path)) continue;
      for (std::uint64_t at : s->ownEntriesOf(m, own)) {
        engine::HitRule rule;
        rule.thread = tid;
        auto id = s->engine->addBreakpoint(at + m.object.loadBias,
                                           [tid](const engine::HitContext& hit) { return hit.tid == tid; }, rule)
                      .get();
        if (!id) {
          s->dropEntryCatch();
          return Error{id.error().id, "step into C/C++: " + id.error().message, true};
        }
        s->entryCatch.push_back(*id);
      }
    }
    return s->entryCatch.size();
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::cancelEntryCatch(Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s]() -> Result<void> {
    s->dropEntryCatch();
    return {};
  }, std::move(done));
}

std::future<Result<OwnPlace>> NativeDebugger::ownPlace(pid_t tid, OwnCode own, Done<OwnPlace> done) {
  State* s = state_.get();
  return s->onEngine<OwnPlace>([s, tid, own = std::move(own)]() -> Result<OwnPlace> {
    auto regs = s->engine->registers(tid).get();
    if (!regs) return regs.takeError();
    auto isOwn = [&](std::uint64_t pc) {
      const sym::Module* m = s->modules.moduleFor(pc);
      if (!m || !m->symbols || !m->symbols->hasDebugInfo() || !own.module(m->object.path)) return false;
      auto where = m->symbols->locationForAddress(pc - m->object.loadBias);
      return where && where->line > 0 && own.file(where->file);
    };
    OwnPlace place;
    place.pc = regs->gpr.rip;
    place.own = isOwn(place.pc);
    if (!place.own) {
      // The call instruction (just before the return address) tells whose code called.
      auto caller = s->returnTarget(tid);
      if (caller && caller->returnAddress > 0 && isOwn(caller->returnAddress - 1)) {
        place.ownReturn = caller->returnAddress;
        place.ownReturnSp = caller->stackPointerAfterReturn;
      }
    }
    return place;
  }, std::move(done));
}

namespace {

std::optional<std::uint64_t> symbolIn(Elf* elf, const std::string& name) {
  if (elf == nullptr) return std::nullopt;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) continue;
    std::size_t count = shdr.sh_size / shdr.sh_entsize;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || sym.st_shndx == SHN_UNDEF) continue;
      const char* n = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (n != nullptr && name == n) return sym.st_value;
    }
  }
  return std::nullopt;
}

}  // namespace

std::future<Result<std::uint64_t>> NativeDebugger::symbolAddress(std::string name, std::string modulePart,
                                                                 Done<std::uint64_t> done) {
  State* s = state_.get();
  return s->onEngine<std::uint64_t>([s, name = std::move(name), modulePart = std::move(modulePart)]() -> Result<std::uint64_t> {
    for (const sym::Module& m : s->modules.modules()) {
      const std::string& path = m.object.path;
      if (!modulePart.empty() && path.find(modulePart) == std::string::npos) continue;
      if (!m.symbols) continue;
      if (auto at = symbolIn(m.symbols->elf(), name)) return *at + m.object.loadBias;
    }
    return std::uint64_t{0};
  }, std::move(done));
}

}  // namespace strata::native::debugger
