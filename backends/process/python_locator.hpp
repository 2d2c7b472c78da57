// Finds the Python interpreter a .py program runs under when the launch names none.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata::backends {

// Where the search looked, so a failure can say so.
struct PythonSearch {
  std::optional<std::string> found;
  std::vector<std::string> pathDirs;  // PATH's folders, pyenv shims left out
  std::string pyenvVersions;          // $PYENV_ROOT/versions or ~/.pyenv/versions; empty without either
};

// The newest CPython >= 3.10 by its versioned name (python3.N) in PATH's folders (pyenv shims
// skipped: they fail for versions not selected) and in pyenv's versions.
PythonSearch findDefaultPython(const std::vector<std::string>& environment);

}  // namespace strata::backends
