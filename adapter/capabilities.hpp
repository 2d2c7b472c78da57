// Capabilities come from one source: what each backend says it can do (BackendFeatures). The
// `initialize` response carries what every debugging backend supports, since the program is
// not known yet; after launch/attach the `capabilities` event adds what the chosen backend
// brings beyond that, its exception filters included.
#pragma once

#include "backends/model.hpp"
#include "strata/protocol/types.hpp"

namespace strata::adapter {

// What every one of `debuggers` supports (none: nothing).
backends::BackendFeatures featuresOfEveryBackend(const std::vector<backends::BackendFeatures>& debuggers);
// The exception filters of all of them, for requests that come before launch.
std::vector<backends::ExceptionFilter> exceptionFiltersOfEveryBackend(
    const std::vector<backends::BackendFeatures>& debuggers);
// `features` plus what any of `services` (the backends beside the debugger) brings.
backends::BackendFeatures withServices(backends::BackendFeatures features,
                                       const std::vector<backends::BackendFeatures>& services);
// Only what both have.
backends::BackendFeatures commonFeatures(const backends::BackendFeatures& a, const backends::BackendFeatures& b);
// Features as DAP capabilities (absent where false), exception filters included.
protocol::Capabilities toCapabilities(const backends::BackendFeatures& features);
// What `features` adds to `known` (the initialize response): only the new capabilities.
protocol::Capabilities addedCapabilities(const protocol::Capabilities& known, const backends::BackendFeatures& features);

}  // namespace strata::adapter
