// Data breakpoints over the engine's hardware watchpoints, the choice of fault signals that stop,
// and the module list.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "convert.hpp"
#include "internal.hpp"

namespace strata::native::debugger {

using State = NativeDebugger::State;

namespace {

std::string integerText(const std::vector<std::uint8_t>& bytes) {
  if (bytes.empty()) return "?";
  std::int64_t v = 0;
  std::memcpy(&v, bytes.data(), std::min<std::size_t>(bytes.size(), 8));
  if (bytes.size() < 8) {
    int bits = static_cast<int>(bytes.size()) * 8;
    std::uint64_t mask = (1ull << bits) - 1;
    std::uint64_t u = static_cast<std::uint64_t>(v) & mask;
    if (u >> (bits - 1)) u |= ~mask;  // sign extend
    v = static_cast<std::int64_t>(u);
  }
  return std::to_string(v);
}

}  // namespace

bool State::describeWatchHit(const engine::EngineStop& event, DebuggerStop& info) {
  info.reason = DebuggerStopReason::DataBreakpoint;
  DataWatch* hit = nullptr;
  for (auto& w : watches)
    if (w.slot == event.watchpointSlot) hit = &w;
  if (!hit) {
    info.description = "data breakpoint";
    return true;
  }
  ++hit->hits;
  std::vector<std::uint8_t> now(hit->spec.size);
  bool readable = engine->memory().read(hit->spec.address, now.data(), now.size()).ok();
  std::string before = integerText(hit->last);
  if (readable) hit->last = now;
  if (hit->hitCondition && !hit->hitCondition(hit->hits)) return false;
  info.hitBreakpointIds.push_back(hit->id);
  std::string after = readable ? integerText(now) : "<unreadable>";
  if (before == after)
    info.description = hit->spec.description + " = " + after + " (accessed)";
  else
    info.description = hit->spec.description + ": " + before + " -> " + after;
  return true;
}

std::future<Result<std::vector<BreakpointPlacement>>> NativeDebugger::setDataBreakpoints(
    std::vector<DataBreakpoint> requested, Done<std::vector<BreakpointPlacement>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<BreakpointPlacement>>([s, requested]() -> Result<std::vector<BreakpointPlacement>> {
    for (auto& w : s->watches)
      if (w.slot >= 0) (void)s->engine->removeWatchpoint(w.slot).get();
    s->watches.clear();
    std::vector<BreakpointPlacement> out;
    for (const auto& r : requested) {
      BreakpointPlacement state;
      state.id = s->nextBreakpointId++;
      state.address = r.address;
      DataWatch w;
      w.id = state.id;
      w.spec = r;
      auto fail = [&](std::string why) {
        state.message = std::move(why);
        out.push_back(state);
      };
      if (r.size != 1 && r.size != 2 && r.size != 4 && r.size != 8) {
        fail("a data breakpoint watches 1, 2, 4 or 8 bytes (asked for " + std::to_string(r.size) + ")");
        continue;
      }
      if (r.address % r.size != 0) {
        fail("the address is not aligned to the watched size (" + std::to_string(r.size) + " bytes)");
        continue;
      }
      if (!r.hitCondition.empty()) {
        auto parsed = parseHitCondition(r.hitCondition);
        if (!parsed) {
          fail(parsed.error().message);
          continue;
        }
        w.hitCondition = std::move(parsed).value();
      }
      auto slot = s->engine->addWatchpoint(r.address, static_cast<int>(r.size),
                                           r.readWrite ? engine::WatchKind::ReadWrite : engine::WatchKind::Write)
                      .get();
      if (!slot) {
        fail(slot.error().message + " (x86-64 has 4 debug registers)");
        continue;
      }
      w.slot = *slot;
      w.last.resize(r.size);
      if (!s->engine->memory().read(r.address, w.last.data(), r.size)) w.last.clear();
      state.verified = true;
      s->watches.push_back(std::move(w));
      out.push_back(state);
    }
    return out;
  }, std::move(done));
}

Result<DataTarget> State::dataTargetIn(const std::shared_ptr<const sym::FrameContext>& frame, const std::string& text) {
  auto info = sym::dataBreakpointInfo(text, frame);
  if (!info) return Error{info.error().id, "no data breakpoint on '" + text + "': " + info.error().message, true};
  DataTarget t;
  t.address = info->address;
  t.size = info->size;
  t.name = text;
  t.description = info->description;
  return t;
}

std::future<Result<DataTarget>> NativeDebugger::dataTarget(std::string expression, int frameId, Done<DataTarget> done) {
  State* s = state_.get();
  return s->onEngine<DataTarget>([s, expression, frameId]() -> Result<DataTarget> {
    std::shared_ptr<const sym::FrameContext> frame;
    if (frameId == 0) {
      if (s->lastTid == 0) return Error{errors::kNotStopped, "the program is not stopped", true};
      auto regs = s->engine->registers(s->lastTid).get();
      if (!regs) return regs.takeError();
      auto made = sym::makeTopFrameContext(s->modules, *regs, s->engine->memory());
      if (!made) return made.takeError();
      frame = std::move(made).value();
    } else {
      auto made = s->frameContext(frameId);
      if (!made) return made.takeError();
      frame = std::move(made).value();
    }
    return s->dataTargetIn(frame, expression);
  }, std::move(done));
}

std::future<Result<DataTarget>> NativeDebugger::dataTargetOfVariable(int ref, std::string name, Done<DataTarget> done) {
  State* s = state_.get();
  return s->onEngine<DataTarget>([s, ref, name]() -> Result<DataTarget> {
    auto it = s->handles.find(ref);
    if (it == s->handles.end())
      return Error{errors::kUnknownReference, "variables reference " + std::to_string(ref) + " is unknown or from an earlier stop", true};
    VariableHandle handle = it->second;
    if (handle.kind == VariableHandle::Kind::Registers)
      return Error{errors::kBadWatchpoint, "registers cannot be watched; watch a variable in memory", true};
    auto frame = s->frameContext(handle.frameId);
    if (!frame) return frame.takeError();
    std::vector<sym::Value> candidates;
    if (handle.kind == VariableHandle::Kind::Children) {
      auto list = sym::children(handle.value, sym::ChildFilter::All, 0, 100000);
      if (!list) return list.takeError();
      candidates = std::move(list).value();
    } else {
      auto list = handle.kind == VariableHandle::Kind::Locals ? sym::localsOf(*frame) : sym::globalsOf(*frame);
      if (!list) return list.takeError();
      candidates = std::move(list).value();
    }
    for (const auto& v : candidates) {
      if (v.name != name) continue;
      if (!v.expression.empty()) {
        auto viaExpression = s->dataTargetIn(v.frame ? v.frame : *frame, v.expression);
        if (viaExpression) {
          viaExpression->name = v.expression;
          return viaExpression;
        }
      }
      if (v.location.kind != sym::ValueLocation::Kind::Memory)
        return Error{errors::kBadWatchpoint, "'" + name + "' is not in memory (a register or optimized out); it cannot be watched", true};
      auto size = sym::typeSize(v.type);
      if (!size || (*size != 1 && *size != 2 && *size != 4 && *size != 8))
        return Error{errors::kBadWatchpoint, "'" + name + "' is not 1, 2, 4 or 8 bytes long; watch one of its members", true};
      DataTarget t;
      t.address = v.location.address;
      t.size = static_cast<std::uint32_t>(*size);
      t.name = v.expression.empty() ? name : v.expression;
      t.description = t.name;
      return t;
    }
    return Error{errors::kUnknownName, "no variable named '" + name + "' here", true};
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::setCoreOnCrash(std::string dir, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, dir = std::move(dir)]() -> Result<void> {
    s->coreDir = dir;
    return {};
  }, std::move(done));
}

std::future<Result<void>> NativeDebugger::setStopSignals(std::vector<int> signals, Done<void> done) {
  State* s = state_.get();
  return s->onEngine<void>([s, signals]() -> Result<void> {
    s->stopSignals = std::set<int>(signals.begin(), signals.end());
    s->stopSignalsSet = true;
    return {};
  }, std::move(done));
}

std::future<Result<std::vector<ModuleEntry>>> NativeDebugger::modules(Done<std::vector<ModuleEntry>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<ModuleEntry>>([s]() -> Result<std::vector<ModuleEntry>> {
    std::vector<ModuleEntry> out;
    for (const auto& m : s->modules.modules()) out.push_back(toModuleEntry(m));
    return out;
  }, std::move(done));
}

std::future<Result<std::vector<std::string>>> NativeDebugger::sourceFiles(std::size_t limit, Done<std::vector<std::string>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<std::string>>([s, limit]() -> Result<std::vector<std::string>> {
    std::set<std::string> found;
    std::set<std::string> checked;
    for (const auto& m : s->modules.modules()) {
      if (!m.symbols || !m.symbols->hasDebugInfo()) continue;
      Dwarf* dwarf = m.symbols->dwarf();
      Dwarf_Off offset = 0, next = 0;
      std::size_t headerSize = 0;
      while (found.size() < limit && dwarf_nextcu(dwarf, offset, &next, &headerSize, nullptr, nullptr, nullptr) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(dwarf, offset + headerSize, &cu)) {
          const char* name = dwarf_diename(&cu);
          Dwarf_Attribute attr;
          const char* dir = dwarf_formstring(dwarf_attr_integrate(&cu, DW_AT_comp_dir, &attr));
          if (name && *name) {
            std::filesystem::path p(name);
            if (p.is_relative() && dir) p = std::filesystem::path(dir) / p;
            std::string text = p.lexically_normal().string();
            // A distribution's libraries name files of their build machine: keep what exists here.
            if (p.is_absolute() && checked.insert(text).second) {
              std::error_code ec;
              if (std::filesystem::is_regular_file(p, ec)) found.insert(text);
            }
          }
        }
        offset = next;
      }
    }
    return std::vector<std::string>(found.begin(), found.end());
  }, std::move(done));
}

}  // namespace strata::native::debugger
