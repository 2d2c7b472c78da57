// Picking the layout of a CPython: the tables built from headers, or a process's own _Py_DebugOffsets.
#pragma once

#include <cstddef>
#include <string>

#include "strata/python/remote/py_remote.hpp"

namespace strata::python::remote {

// "3.12.1" from PY_VERSION_HEX.
std::string versionText(std::uint64_t hex);
// "3.10, 3.11, 3.12": the minors with a built table.
std::string builtMinorsText();
// The built table for that minor: the exact version's when built, else another of the minor.
Result<PyLayout> builtLayoutFor(int minor, std::uint64_t versionHex);
// From the bytes at the start of _PyRuntime of a 3.13 or 3.14 process, checked against Py_Version.
Result<PyLayout> layoutFromDebugOffsets(const void* bytes, std::size_t size, std::uint64_t versionHex);

}  // namespace strata::python::remote
