// The one line a crash is said in, for every session that stops at one (native, mixed, a
// core file): the signal's description, the function it happened in and the innermost frame of
// the program's own code above it ("SIGSEGV: read of unmapped address 0x100c in memmove, called
// from load_weights at crashes.py:19").
#pragma once

#include <string>
#include <vector>

#include "backends/model.hpp"

namespace strata::backends {

std::string crashDiagnosis(const std::string& signal, const std::vector<FrameInfo>& frames);

}  // namespace strata::backends
