// C++ names made readable, the one way every layer does it (symbols, GPU kernels, reports).
#pragma once

#include <cxxabi.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace strata {

// The readable form of an Itanium-mangled name ("_Z..."); any other name (a C function, a
// Triton kernel's plain name) or one that does not demangle, as it is.
inline std::string demangle(std::string_view name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  std::string mangled(name);
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return mangled;
  }
  std::string readable(out);
  std::free(out);
  return readable;
}

}  // namespace strata
