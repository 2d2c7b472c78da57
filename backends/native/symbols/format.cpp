// Text forms of scalar values: quoted strings (valid UTF-8), characters and shortest doubles.
#include <charconv>
#include <cstdio>

#include "value_internal.hpp"

namespace strata::native::symbols {

namespace {

// Length of a valid UTF-8 sequence at s[i], or 0: other high bytes are escaped so the
// presentation is always valid UTF-8 for the JSON it ends up in.
std::size_t utf8Length(const std::string& s, std::size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string quote(const std::string& s, bool truncated) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (std::size_t n = utf8Length(s, i)) {
        out.append(s, i, n);
        i += n - 1;
        continue;
      }
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += truncated ? "\"..." : "\"";
  return out;
}

std::string formatDouble(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

std::string charLiteral(std::int64_t v) {
  unsigned char c = static_cast<unsigned char>(v);
  std::string out = std::to_string(v) + " '";
  if (c == '\'') out += "\\'";
  else if (c == '\\') out += "\\\\";
  else if (c == 0) out += "\\0";
  else if (c == '\n') out += "\\n";
  else if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
  else {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  return out + "'";
}

}  // namespace strata::native::symbols
