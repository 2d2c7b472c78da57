// Helpers private to the symbols library: formatting and small libdw conveniences.
#pragma once

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "strata/hex.hpp"
#include "strata/native/target_access.hpp"

namespace strata::native::symbols::detail {

using strata::hexAddress;

// As much of [address, address+size) as is readable from its start, page by page (the code
// before an unmapped page, bytes that end at a mapping's end).
std::vector<std::uint8_t> readAvailable(MemoryAccess& memory, std::uint64_t address, std::size_t size);

inline std::string dwError(const std::string& operation) {
  return operation + ": " + dwarf_errmsg(-1);
}

// DW_AT_name, following DW_AT_abstract_origin and DW_AT_specification.
inline const char* integratedName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

// A source file's name as users know it. Line tables name files relative to the build
// directory when the compiler was given relative paths (`gcc -g src/a.c`, ccache's base_dir):
// joined with an absolute DW_AT_comp_dir and "."/".." folded. A relative build directory
// (a distribution's reproducible build: "./csu") leaves the name relative.
inline std::string sourcePath(std::string_view file, const char* compDir) {
  std::filesystem::path p(file);
  if (p.is_relative()) {
    if (file.empty() || compDir == nullptr || compDir[0] != '/') return std::string(file);
    p = std::filesystem::path(compDir) / p;
  } else if (file.find("/.") == std::string_view::npos) {
    return std::string(file);
  }
  return p.lexically_normal().string();
}

inline const char* compDirOf(Dwarf_Die* cu) {
  Dwarf_Attribute attr;
  return dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
}

}  // namespace strata::native::symbols::detail

namespace strata::native::symbols {
// Drops cached type names of a Dwarf handle that is being closed.
void forgetTypeNames(Dwarf* dwarf);
}  // namespace strata::native::symbols
