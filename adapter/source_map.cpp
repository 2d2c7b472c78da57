// The session's sourceMap (source_map.hpp).
#include "adapter/source_map.hpp"

#include <boost/json.hpp>

#include "strata/error_ids.hpp"

namespace strata::adapter {

namespace json = boost::json;

namespace {

std::string trimmed(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// `path` with `from` replaced by `to`, when `from` is a whole-component prefix of it.
std::optional<std::string> replaced(const std::string& path, const std::string& from, const std::string& to) {
  if (path.compare(0, from.size(), from) != 0) return std::nullopt;
  if (path.size() > from.size() && path[from.size()] != '/' && from != "/") return std::nullopt;
  std::string rest = path.substr(from.size());
  if (from == "/" && !rest.empty() && rest[0] != '/') rest = "/" + rest;
  if (to == "/" && !rest.empty()) return rest;
  return to + rest;
}

std::string mapped(const std::vector<std::pair<std::string, std::string>>& rules, const std::string& path, bool out) {
  const std::string* best = nullptr;
  const std::string* target = nullptr;
  for (const auto& [debuggee, client] : rules) {
    const std::string& from = out ? debuggee : client;
    if (replaced(path, from, out ? client : debuggee) && (!best || from.size() > best->size())) {
      best = &from;
      target = out ? &client : &debuggee;
    }
  }
  return best ? *replaced(path, *best, *target) : path;
}

}  // namespace

Result<SourceMap> SourceMap::parse(const json::value& value, const std::string& where) {
  SourceMap map;
  if (value.is_null()) return map;
  auto bad = [&](const std::string& why) {
    return Error{errors::kBadArguments, where + ": " + why + " (an array of [\"debuggee prefix\", \"local prefix\"] pairs, or an object of them)", false};
  };
  auto add = [&](const json::value& from, const json::value& to, const std::string& at) -> Result<void> {
    if (!from.is_string() || !to.is_string() || from.as_string().empty() || to.as_string().empty())
      return bad(at + " is not a pair of non-empty paths");
    map.rules_.emplace_back(trimmed(std::string(from.as_string())), trimmed(std::string(to.as_string())));
    return {};
  };
  if (value.is_object()) {
    for (const auto& [k, v] : value.as_object())
      if (auto r = add(json::value(k), v, "the entry \"" + std::string(k) + "\""); !r) return r.takeError();
    return map;
  }
  if (!value.is_array()) return bad("not an array or an object");
  const auto& pairs = value.as_array();
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto* pair = pairs[i].if_array();
    if (!pair || pair->size() != 2) return bad("entry " + std::to_string(i) + " is not a pair");
    if (auto r = add((*pair)[0], (*pair)[1], "entry " + std::to_string(i)); !r) return r.takeError();
  }
  return map;
}

std::string SourceMap::toClient(const std::string& path) const { return rules_.empty() ? path : mapped(rules_, path, true); }

std::string SourceMap::toDebuggee(const std::string& path) const { return rules_.empty() ? path : mapped(rules_, path, false); }

}  // namespace strata::adapter
