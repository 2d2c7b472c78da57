// Boost.JSON decoding with paths: a missing or mistyped field names where it is
// ("arguments.source.path"), and the encoding helpers that leave absent optionals out.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/result.hpp"

namespace strata::protocol {

namespace json = boost::json;

// Tag for the hand-written decoders: `void tag_invoke(decode_tag, Reader&, T&)`.
struct decode_tag {};

const char* kindName(const json::value& v);

// Reads the members of one JSON object. The first problem wins and is kept with its path;
// later reads become no-ops, so a decoder is a flat list of field reads.
class Reader {
 public:
  Reader() = default;
  Reader(const json::value& value, std::string path);

  bool ok() const { return !error_; }
  const std::string& path() const { return path_; }
  const json::object* object() const { return object_; }
  // The first problem: "arguments.program: required field is missing".
  Error error() const { return Error{errors::kMalformedMessage, *error_, false}; }

  template <class T>
  void required(std::string_view key, T& out) {
    const json::value* v = field(key);
    if (!ok()) return;
    if (!v || v->is_null()) return fail(join(key), "required field is missing");
    decodeInto(*v, join(key), out);
  }

  template <class T>
  void optional(std::string_view key, std::optional<T>& out) {
    const json::value* v = field(key);
    if (!ok() || !v || v->is_null()) return;
    T tmp{};
    decodeInto(*v, join(key), tmp);
    if (ok()) out = std::move(tmp);
  }

  // Optional with a default already in `out`.
  template <class T>
  void optionalOr(std::string_view key, T& out) {
    const json::value* v = field(key);
    if (!ok() || !v || v->is_null()) return;
    decodeInto(*v, join(key), out);
  }

  void fail(const std::string& where, const std::string& what);

  // Decoding of one value of any supported type at `where`.
  void decodeInto(const json::value& v, const std::string& where, bool& out);
  void decodeInto(const json::value& v, const std::string& where, std::int64_t& out);
  void decodeInto(const json::value& v, const std::string& where, int& out);
  void decodeInto(const json::value& v, const std::string& where, double& out);
  void decodeInto(const json::value& v, const std::string& where, std::string& out);
  void decodeInto(const json::value& v, const std::string& where, json::value& out) {
    (void)where;
    out = v;
  }
  void decodeInto(const json::value& v, const std::string& where, json::object& out);
  template <class T>
  void decodeInto(const json::value& v, const std::string& where, std::vector<T>& out) {
    if (!v.is_array()) return mistyped(v, where, "an array");
    const auto& arr = v.as_array();
    out.clear();
    out.reserve(arr.size());
    for (std::size_t i = 0; i < arr.size() && ok(); ++i) {
      T item{};
      decodeInto(arr[i], where + "[" + std::to_string(i) + "]", item);
      out.push_back(std::move(item));
    }
  }
  template <class T>
  void decodeInto(const json::value& v, const std::string& where, std::optional<T>& out) {
    if (v.is_null()) return;
    T tmp{};
    decodeInto(v, where, tmp);
    if (ok()) out = std::move(tmp);
  }
  template <class T>
  void decodeInto(const json::value& v, const std::string& where, std::map<std::string, T>& out) {
    if (!v.is_object()) return mistyped(v, where, "an object");
    for (const auto& kv : v.as_object()) {
      if (!ok()) return;
      T item{};
      decodeInto(kv.value(), where + "." + std::string(kv.key()), item);
      out.emplace(std::string(kv.key()), std::move(item));
    }
  }
  // Structs: anything with a tag_invoke(decode_tag, Reader&, T&).
  template <class T>
    requires requires(Reader& r, T& t) { tag_invoke(decode_tag{}, r, t); }
  void decodeInto(const json::value& v, const std::string& where, T& out) {
    if (!v.is_object()) return mistyped(v, where, "an object");
    Reader nested(v, where);
    tag_invoke(decode_tag{}, nested, out);
    if (!nested.ok()) error_ = nested.error_;
  }

  void mistyped(const json::value& v, const std::string& where, const char* expected);

 private:
  const json::value* field(std::string_view key);
  std::string join(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  const json::object* object_ = nullptr;
  std::string path_;
  std::optional<std::string> error_;
};

// Decodes a whole value at `path` ("arguments") into T.
template <class T>
Result<T> decode(const json::value& v, const std::string& path) {
  Reader r;
  T out{};
  r.decodeInto(v, path, out);
  if (!r.ok()) return r.error();
  return out;
}

// Encoding helpers for tag_invoke(value_from_tag...): absent optionals are omitted.
template <class T>
void put(json::object& o, std::string_view key, const T& value) {
  o[key] = json::value_from(value);
}
template <class T>
void put(json::object& o, std::string_view key, const std::optional<T>& value) {
  if (value) o[key] = json::value_from(*value);
}

// Serialises without a trailing newline; strings are emitted as valid UTF-8 JSON, invalid
// sequences in them replaced by U+FFFD.
std::string serialize(const json::value& v);

// Replaces invalid UTF-8 sequences with U+FFFD so any byte stream can become a JSON string.
// Keeps an incomplete trailing sequence in `carry` for the next chunk when given.
std::string sanitizeUtf8(std::string_view bytes, std::string* carry = nullptr);

}  // namespace strata::protocol
