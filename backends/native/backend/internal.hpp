// Pieces the native backend's source files share: a path helper, onSession().
#pragma once

#include <memory>
#include <string>

#include "backends/native/backend/native_backend.hpp"

namespace strata::backends::native_detail {

inline std::string baseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace strata::backends::native_detail

namespace strata::backends {

// The facade answers on the engine thread; this carries the answer to the session's thread,
// posted in the engine's order (events go the same way), and drops it if this backend is gone.
template <class F>
auto NativeBackend::onSession(F done) {
  return [io = &io_, alive = std::weak_ptr<bool>(alive_), done = std::move(done)](auto result) mutable {
    asio::post(*io, [alive, done, result = std::move(result)]() mutable {
      if (!alive.expired()) done(std::move(result));
    });
  };
}

}  // namespace strata::backends
