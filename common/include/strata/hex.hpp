// An address or other unsigned value as the debugger shows it: "0x401000".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace strata {

inline std::string hexAddress(std::uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace strata
