// Source, function and instruction breakpoints: resolution in every loaded object, pending ones
// resolved at each library load, conditions and hit counts decided inside the engine.
#include <cctype>
#include <filesystem>

#include "convert.hpp"
#include "internal.hpp"

namespace strata::native::debugger {

using State = NativeDebugger::State;

Result<std::shared_ptr<UserBreakpoint>> State::makeBreakpoint(UserBreakpoint::Kind kind, const std::string& condition,
                                                              const std::string& hitCondition,
                                                              const std::string& logMessage) {
  auto bp = std::make_shared<UserBreakpoint>();
  bp->kind = kind;
  bp->state.id = nextBreakpointId++;
  bp->rule.group = static_cast<std::uint32_t>(bp->state.id);
  bp->rule.breakpointNumber = bp->state.id;
  bp->rule.condition = condition;
  bp->rule.hitCondition = hitCondition;
  bp->rule.logMessage = logMessage;
  auto compiled = CompiledRule::compile(bp->rule);
  if (!compiled) {
    --nextBreakpointId;
    return compiled.takeError();
  }
  bp->compiled = std::move(compiled).value();
  return bp;
}

bool State::shouldStop(UserBreakpoint& bp, const engine::HitContext& hit) {
  return bp.compiled->decide(hit, modules, bp.hits, callbacks.output);
}

Result<void> State::addSite(const std::shared_ptr<UserBreakpoint>& bp, std::uint64_t address) {
  if (bp->addresses.count(address)) return {};
  std::weak_ptr<UserBreakpoint> weak = bp;
  auto id = engine
                ->addBreakpoint(address,
                                [this, weak](const engine::HitContext& hit) {
                                  auto strong = weak.lock();
                                  return strong && shouldStop(*strong, hit);
                                },
                                bp->rule)
                .get();
  if (!id) return Error{id.error().id, "breakpoint at 0x" + std::to_string(address) + ": " + id.error().message, true};
  bp->sites.push_back(*id);
  bp->addresses.insert(address);
  siteOwner[*id] = bp->state.id;
  return {};
}

void State::resolve(UserBreakpoint& bp, const sym::Module& module) {
  auto self = breakpoints.at(bp.state.id);
  const auto& symbols = module.symbols;
  if (!symbols) return;
  std::vector<std::uint64_t> found;
  switch (bp.kind) {
    case UserBreakpoint::Kind::Source: {
      if (!symbols->hasDebugInfo()) return;
      auto lines = symbols->addressesForLine(bp.requestedFile, bp.requestedLine);
      if (!lines || lines->addresses.empty()) return;
      for (auto a : lines->addresses) found.push_back(a + module.object.loadBias);
      if (!bp.state.verified) {
        bp.state.line = lines->line;
        bp.state.file = lines->file;
      }
      break;
    }
    case UserBreakpoint::Kind::Function: {
      auto fns = symbols->functionsNamed(bp.function);
      if (!fns) return;
      for (auto& fn : *fns) {
        std::uint64_t at = fn.hasDebugInfo && !fn.inlinedCopy ? symbols->afterPrologue(fn) : fn.entry;
        if (at == 0) at = fn.entry;
        found.push_back(at + module.object.loadBias);
        if (!bp.state.verified && fn.hasDebugInfo) {
          if (auto loc = symbols->locationForAddress(at)) {
            bp.state.file = loc->file;
            bp.state.line = loc->line;
          }
        }
      }
      break;
    }
    case UserBreakpoint::Kind::Instruction: {
      std::uint64_t a = bp.state.address;
      if (a >= module.low && a < module.high) found.push_back(a);
      break;
    }
  }
  std::string failure;
  for (auto a : found) {
    if (auto r = addSite(self, a); !r) failure = r.error().message;
  }
  bool verified = !bp.sites.empty();
  if (verified && !bp.state.verified) {
    bp.state.verified = true;
    bp.state.message.clear();
    if (bp.state.address == 0) bp.state.address = found.front();
  } else if (!verified && !failure.empty()) {
    bp.state.message = failure;
  }
}

void State::removeBreakpoint(UserBreakpoint& bp) {
  for (auto site : bp.sites) {
    (void)engine->removeBreakpoint(site).get();
    siteOwner.erase(site);
  }
  bp.sites.clear();
  bp.addresses.clear();
  breakpoints.erase(bp.state.id);
}

std::vector<BreakpointPlacement> State::replace(std::vector<int>& owned, std::vector<std::shared_ptr<UserBreakpoint>> fresh) {
  for (int id : owned) {
    auto it = breakpoints.find(id);
    if (it != breakpoints.end()) removeBreakpoint(*it->second);
  }
  owned.clear();
  std::vector<BreakpointPlacement> out;
  for (auto& bp : fresh) {
    if (!bp) {
      out.push_back(BreakpointPlacement{});
      continue;
    }
    breakpoints[bp->state.id] = bp;
    owned.push_back(bp->state.id);
    for (const auto& m : modules.modules()) resolve(*bp, m);
    if (!bp->state.verified && bp->state.message.empty())
      bp->state.message = bp->kind == UserBreakpoint::Kind::Source
                              ? "pending: no loaded object has code for this line yet"
                              : "pending: not found in any loaded object yet";
    out.push_back(bp->state);
  }
  return out;
}

void State::onLibraries(const engine::LibraryEvent& event) {
  for (const auto& gone : event.removed) {
    forgetGpuErrors(gone.path);
    modules.remove(gone.path);
    ModuleEntry entry;
    entry.path = gone.path;
    entry.name = std::filesystem::path(gone.path).filename().string();
    if (callbacks.module) emit([this, entry] { callbacks.module(entry, false); });
  }
  if (unwinder && !event.removed.empty()) unwinder->flushCaches();
  for (const auto& object : event.added) {
    auto added = modules.add(object);
    if (!added) continue;  // an object we cannot read has no symbols; its code still runs
    const sym::Module module = **added;
    if (callbacks.module) emit([this, entry = toModuleEntry(module)] { callbacks.module(entry, true); });
    // Before the library's code runs: the engine holds every thread during this callback.
    watchGpuErrors(module);
    for (auto& [id, bp] : std::map<int, std::shared_ptr<UserBreakpoint>>(breakpoints)) {
      bool was = bp->state.verified;
      resolve(*bp, module);
      if (!was && bp->state.verified && callbacks.breakpointChanged)
        emit([this, state = bp->state] { callbacks.breakpointChanged(state); });
    }
  }
  if (unwinder && !event.added.empty()) unwinder->flushCaches();
}

std::future<Result<std::vector<BreakpointPlacement>>> NativeDebugger::setSourceBreakpoints(
    std::string file, std::vector<SourceBreakpoint> requested, Done<std::vector<BreakpointPlacement>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<BreakpointPlacement>>(
      [s, file, requested]() -> Result<std::vector<BreakpointPlacement>> {
        std::vector<std::shared_ptr<UserBreakpoint>> fresh;
        std::vector<std::optional<Error>> errors;
        for (const auto& r : requested) {
          auto bp = s->makeBreakpoint(UserBreakpoint::Kind::Source, r.condition, r.hitCondition, r.logMessage);
          if (!bp) {
            fresh.push_back(nullptr);
            errors.push_back(bp.takeError());
            continue;
          }
          (*bp)->requestedFile = file;
          (*bp)->requestedLine = r.line;
          (*bp)->state.line = r.line;
          (*bp)->state.file = file;
          fresh.push_back(*bp);
          errors.push_back(std::nullopt);
        }
        auto out = s->replace(s->sourceBreakpoints[file], std::move(fresh));
        for (std::size_t i = 0; i < out.size(); ++i) {
          if (!errors[i]) continue;
          out[i].line = requested[i].line;
          out[i].file = file;
          out[i].message = errors[i]->message;
        }
        return out;
      }, std::move(done));
}

std::future<Result<std::vector<BreakpointPlacement>>> NativeDebugger::setFunctionBreakpoints(
    std::vector<FunctionBreakpoint> requested, Done<std::vector<BreakpointPlacement>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<BreakpointPlacement>>([s, requested]() -> Result<std::vector<BreakpointPlacement>> {
    std::vector<std::shared_ptr<UserBreakpoint>> fresh;
    std::vector<std::string> errors;
    for (const auto& r : requested) {
      auto bp = s->makeBreakpoint(UserBreakpoint::Kind::Function, r.condition, r.hitCondition, {});
      errors.push_back(bp ? std::string() : bp.error().message);
      if (bp) (*bp)->function = r.name;
      fresh.push_back(bp ? *bp : nullptr);
    }
    auto out = s->replace(s->functionBreakpoints, std::move(fresh));
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!errors[i].empty()) out[i].message = errors[i];
    return out;
  }, std::move(done));
}

std::future<Result<std::vector<BreakpointPlacement>>> NativeDebugger::setInstructionBreakpoints(
    std::vector<InstructionBreakpoint> requested, Done<std::vector<BreakpointPlacement>> done) {
  State* s = state_.get();
  return s->onEngine<std::vector<BreakpointPlacement>>([s, requested]() -> Result<std::vector<BreakpointPlacement>> {
    std::vector<std::shared_ptr<UserBreakpoint>> fresh;
    std::vector<std::string> errors;
    for (const auto& r : requested) {
      auto bp = s->makeBreakpoint(UserBreakpoint::Kind::Instruction, r.condition, r.hitCondition, {});
      errors.push_back(bp ? std::string() : bp.error().message);
      if (bp) (*bp)->state.address = r.address;
      fresh.push_back(bp ? *bp : nullptr);
    }
    auto out = s->replace(s->instructionBreakpoints, std::move(fresh));
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!errors[i].empty()) out[i].message = errors[i];
    return out;
  }, std::move(done));
}

}  // namespace strata::native::debugger
