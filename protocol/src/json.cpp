// Path-carrying JSON decoding and UTF-8 hygiene for strings that come from debuggees.
#include "strata/protocol/json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::protocol {

const char* kindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

Reader::Reader(const json::value& value, std::string path) : path_(std::move(path)) {
  if (value.is_object()) object_ = &value.as_object();
}

const json::value* Reader::field(std::string_view key) {
  if (!ok() || !object_) return nullptr;
  auto it = object_->find(key);
  return it == object_->end() ? nullptr : &it->value();
}

void Reader::fail(const std::string& where, const std::string& what) {
  if (!error_) error_ = where + ": " + what;
}

void Reader::mistyped(const json::value& v, const std::string& where, const char* expected) {
  fail(where, std::string("expected ") + expected + ", got " + kindName(v));
}

void Reader::decodeInto(const json::value& v, const std::string& where, bool& out) {
  if (!v.is_bool()) return mistyped(v, where, "a boolean");
  out = v.get_bool();
}

void Reader::decodeInto(const json::value& v, const std::string& where, std::int64_t& out) {
  if (v.is_int64()) {
    out = v.get_int64();
  } else if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return fail(where, "integer out of range");
    out = static_cast<std::int64_t>(v.get_uint64());
  } else if (v.is_double() && std::isfinite(v.get_double()) &&
             v.get_double() == std::floor(v.get_double()) && std::fabs(v.get_double()) < 9.0e15) {
    out = static_cast<std::int64_t>(v.get_double());  // some clients send 3.0
  } else {
    mistyped(v, where, "an integer");
  }
}

void Reader::decodeInto(const json::value& v, const std::string& where, int& out) {
  std::int64_t wide = 0;
  decodeInto(v, where, wide);
  if (!ok()) return;
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
    return fail(where, "integer out of range");
  out = static_cast<int>(wide);
}

void Reader::decodeInto(const json::value& v, const std::string& where, double& out) {
  if (v.is_double()) out = v.get_double();
  else if (v.is_int64()) out = static_cast<double>(v.get_int64());
  else if (v.is_uint64()) out = static_cast<double>(v.get_uint64());
  else mistyped(v, where, "a number");
}

void Reader::decodeInto(const json::value& v, const std::string& where, std::string& out) {
  if (!v.is_string()) return mistyped(v, where, "a string");
  out = std::string(v.get_string());
}

void Reader::decodeInto(const json::value& v, const std::string& where, json::object& out) {
  if (!v.is_object()) return mistyped(v, where, "an object");
  out = v.get_object();
}

std::string serialize(const json::value& v) {
  std::string text = json::serialize(v);
  // Boost.JSON writes a string's bytes as they are, and what a backend reports (a path, a
  // symbol, memory shown as text) need not be UTF-8. Every message passes here, so invalid
  // sequences become U+FFFD here; JSON's own syntax is ASCII and stays as it is.
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return text;
  return sanitizeUtf8(text);
}

std::string sanitizeUtf8(std::string_view in, std::string* carry) {
  std::string joined;
  if (carry && !carry->empty()) {
    joined = *carry + std::string(in);
    carry->clear();
    in = joined;
  }
  std::string out;
  out.reserve(in.size());
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t n = in.size(), i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      // Find the end of the ASCII run and copy it at once: output is mostly ASCII.
      std::size_t j = i + 1;
      while (j < n && s[j] < 0x80) ++j;
      out.append(in.data() + i, j - i);
      i = j;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0, min = 0;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07, min = 0x10000;
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (i + len > n) {
      // Possibly a sequence split across reads: keep it for the next chunk if it is a valid prefix.
      bool prefix = true;
      for (std::size_t k = i + 1; k < n; ++k) prefix = prefix && (s[k] & 0xC0) == 0x80;
      if (carry && prefix) {
        carry->assign(in.data() + i, n - i);
        return out;
      }
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    bool valid = true;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) { valid = false; break; }
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (!valid || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(in.data() + i, len);
    i += len;
  }
  return out;
}

}  // namespace strata::protocol
