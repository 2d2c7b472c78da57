// The backends strata-dap ships, as the session's backend factory.
#pragma once

#include "adapter/session.hpp"

namespace strata::adapter {

// Launch: the ptrace debugger for an executable, the Python backend for a script or module,
// the plain process runner with noDebug. Attach: native for a process id, Python otherwise.
// Beside it, in every session: the GPU backend (backends/cuda/service).
BackendFactory builtinBackends();

}  // namespace strata::adapter
