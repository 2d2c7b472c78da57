// Turns a DAP launch request into a LaunchSpec: paths checked, interpreter chosen,
// environment merged — every failure named with the path and the reason.
#pragma once

#include <string>
#include <vector>

#include "backends/gpu.hpp"
#include "backends/model.hpp"
#include "strata/protocol/types.hpp"

namespace strata::adapter {

Result<backends::LaunchSpec> resolveLaunch(const protocol::LaunchRequestArguments& args,
                                           const std::vector<std::string>& adapterEnvironment,
                                           const std::string& adapterCwd);

// launch {"trace": PATH}: the trace (it must exist) and the session's store ("gpuStore"; it must
// not exist), both relative to the launch's cwd.
Result<backends::GpuTraceSpec> resolveTraceLaunch(const protocol::LaunchRequestArguments& args,
                                                  const std::string& adapterCwd);
// A launch's "gpuStore" as an absolute path (empty when absent), checked like the above.
Result<std::string> resolveGpuStore(const protocol::LaunchRequestArguments& args, const std::string& adapterCwd);

}  // namespace strata::adapter
