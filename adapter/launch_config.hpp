// Turns a DAP launch request into a LaunchSpec: paths checked, interpreter chosen,
// environment merged — every failure named with the path and the reason.
#pragma once

#include <string>
#include <vector>

#include "backends/model.hpp"
#include "strata/protocol/types.hpp"

namespace strata::adapter {

Result<backends::LaunchSpec> resolveLaunch(const protocol::LaunchRequestArguments& args,
                                           const std::vector<std::string>& adapterEnvironment,
                                           const std::string& adapterCwd);

}  // namespace strata::adapter
