// A breakpoint's stop decision (engine::HitRule) parsed once and decided per hit: the same code
// in strata-dap (in-process engine) and in strata-engine (which evaluates its client's rules
// itself, so a false condition costs no round trip between the processes).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "strata/native/engine/engine.hpp"
#include "strata/native/symbols/expression.hpp"
#include "strata/native/symbols/module_map.hpp"

namespace strata::native::debugger {

// DAP's hitCondition: "N" or "==N", ">=N", ">N", "<=N", "<N", "%N".
Result<std::function<bool(std::uint64_t)>> parseHitCondition(const std::string& text);

class CompiledRule {
 public:
  // Errors name the part that does not parse ("condition 'x <': ...").
  static Result<std::shared_ptr<const CompiledRule>> compile(const engine::HitRule& rule);
  const engine::HitRule& rule() const { return rule_; }

  // One hit: true stops. `hits` is the breakpoint's count (incremented when the hit passes the
  // filters and the condition); `output` gets log lines and "condition failed" messages. A
  // condition that cannot be evaluated stops, as in other debuggers: running on silently
  // would hide the mistake.
  bool decide(const engine::HitContext& hit, const symbols::ModuleMap& modules, std::uint64_t& hits,
              const std::function<void(const std::string&)>& output) const;

 private:
  engine::HitRule rule_;
  std::optional<symbols::Expression> condition_;
  std::function<bool(std::uint64_t)> hitCondition_;
  std::optional<symbols::LogMessage> log_;
};

}  // namespace strata::native::debugger
