// What the native backend's source files share: onSession(), the hop to the session's thread.
#pragma once

#include <memory>

#include "backends/native/backend/native_backend.hpp"

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
