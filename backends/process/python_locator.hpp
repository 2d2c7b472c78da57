// Finds the Python interpreter a .py program runs under when the launch names none.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata::backends {

// The newest CPython >= 3.12: versioned names on PATH (pyenv shims skipped: they fail for
// versions not selected), then pyenv's versions, then those found when Strata was built.
std::optional<std::string> findDefaultPython(const std::vector<std::string>& environment);

}  // namespace strata::backends
