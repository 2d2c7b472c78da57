// Reading the fields of DAP and MCP messages the CLI receives: a missing or mistyped field reads
// as empty, 0 or `otherwise` (the CLI prints what it got, it does not validate adapters).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json.hpp>

namespace strata::cli::fields {

inline std::string str(const boost::json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}
// Integers as JSON gives them: signed, unsigned, or a double with no fraction.
inline std::optional<std::int64_t> integer(const boost::json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (v && v->is_int64()) return v->get_int64();
  if (v && v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  if (v && v->is_double() && v->get_double() == static_cast<double>(static_cast<std::int64_t>(v->get_double())))
    return static_cast<std::int64_t>(v->get_double());
  return std::nullopt;
}
inline std::int64_t num(const boost::json::object& o, const char* key, std::int64_t otherwise = 0) {
  return integer(o, key).value_or(otherwise);
}
inline bool flag(const boost::json::object& o, const char* key, bool otherwise) {
  auto* v = o.if_contains(key);
  return v && v->is_bool() ? v->get_bool() : otherwise;
}
inline const boost::json::object& obj(const boost::json::value& v) {
  static const boost::json::object empty;
  return v.is_object() ? v.get_object() : empty;
}
inline const boost::json::array& arr(const boost::json::object& o, const char* key) {
  static const boost::json::array empty;
  auto* v = o.if_contains(key);
  return v && v->is_array() ? v->get_array() : empty;
}

}  // namespace strata::cli::fields
