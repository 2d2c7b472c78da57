// Helpers private to the symbols library: formatting and small libdw conveniences.
#pragma once

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "strata/hex.hpp"

namespace strata::native::symbols::detail {

using strata::hexAddress;

inline std::string dwError(const std::string& operation) {
  return operation + ": " + dwarf_errmsg(-1);
}

// DW_AT_name, following DW_AT_abstract_origin and DW_AT_specification.
inline const char* integratedName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

}  // namespace strata::native::symbols::detail

namespace strata::native::symbols {
// Drops cached type names of a Dwarf handle that is being closed.
void forgetTypeNames(Dwarf* dwarf);
}  // namespace strata::native::symbols
