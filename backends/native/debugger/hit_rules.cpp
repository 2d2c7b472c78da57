// Hit rules: parsed once, decided on every hit (hit_rules.hpp).
#include "strata/native/debugger/hit_rules.hpp"

#include <cctype>

#include "strata/native/symbols/values.hpp"

namespace strata::native::debugger {

namespace sym = strata::native::symbols;

Result<std::function<bool(std::uint64_t)>> parseHitCondition(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string op;
  while (i < text.size() && std::string_view("<>=%!").find(text[i]) != std::string_view::npos) op += text[i++];
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::size_t end = text.size();
  while (end > i && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  std::string digits = text.substr(i, end - i);
  bool numeric = !digits.empty();
  for (char c : digits) numeric &= std::isdigit(static_cast<unsigned char>(c)) != 0;
  auto bad = [&] {
    return Error{errors::kBadHitCondition, "hit condition '" + text + "': expected N, >=N, >N, %N or ==N with N a whole number", true};
  };
  if (!numeric || digits.size() > 18) return bad();
  std::uint64_t n = std::stoull(digits);
  if (op.empty() || op == "==") return std::function<bool(std::uint64_t)>([n](std::uint64_t h) { return h == n; });
  if (op == ">=") return std::function<bool(std::uint64_t)>([n](std::uint64_t h) { return h >= n; });
  if (op == ">") return std::function<bool(std::uint64_t)>([n](std::uint64_t h) { return h > n; });
  if (op == "<=") return std::function<bool(std::uint64_t)>([n](std::uint64_t h) { return h <= n; });
  if (op == "<") return std::function<bool(std::uint64_t)>([n](std::uint64_t h) { return h < n; });
  if (op == "%") {
    if (n == 0) return bad();
    return std::function<bool(std::uint64_t)>([n](std::uint64_t h) { return h % n == 0; });
  }
  return bad();
}

Result<std::shared_ptr<const CompiledRule>> CompiledRule::compile(const engine::HitRule& rule) {
  auto out = std::make_shared<CompiledRule>();
  out->rule_ = rule;
  if (!rule.condition.empty()) {
    auto parsed = sym::Expression::parse(rule.condition);
    if (!parsed) return Error{parsed.error().id, "condition '" + rule.condition + "': " + parsed.error().message, true};
    out->condition_ = std::move(parsed).value();
  }
  if (!rule.hitCondition.empty()) {
    auto parsed = parseHitCondition(rule.hitCondition);
    if (!parsed) return parsed.takeError();
    out->hitCondition_ = std::move(parsed).value();
  }
  if (!rule.logMessage.empty()) {
    auto parsed = sym::LogMessage::parse(rule.logMessage);
    if (!parsed) return Error{parsed.error().id, "log message '" + rule.logMessage + "': " + parsed.error().message, true};
    out->log_ = std::move(parsed).value();
  }
  return std::shared_ptr<const CompiledRule>(std::move(out));
}

bool CompiledRule::decide(const engine::HitContext& hit, const sym::ModuleMap& modules, std::uint64_t& hits,
                          const std::function<void(const std::string&)>& output) const {
  if (rule_.thread != 0 && hit.tid != rule_.thread) return false;
  if (rule_.stackPointer != 0 && hit.registers && hit.registers->gpr.rsp != rule_.stackPointer) return false;
  if (condition_ || log_) {
    auto frame = sym::makeTopFrameContext(modules, *hit.registers, *hit.memory);
    if (condition_) {
      if (!frame) return true;
      auto verdict = condition_->evaluateCondition(*frame);
      if (!verdict) {
        if (output)
          output("breakpoint " + std::to_string(rule_.breakpointNumber) + ": condition failed: " +
                 verdict.error().message + "\n");
        return true;
      }
      if (!*verdict) return false;
    }
    ++hits;
    if (hitCondition_ && !hitCondition_(hits)) return false;
    if (log_) {
      std::string text = frame ? log_->render(*frame) : "<error: " + frame.error().message + ">";
      if (output) output(text + "\n");
      return false;
    }
    return !rule_.neverStop;
  }
  ++hits;
  if (hitCondition_ && !hitCondition_(hits)) return false;
  return !rule_.neverStop;
}

}  // namespace strata::native::debugger
