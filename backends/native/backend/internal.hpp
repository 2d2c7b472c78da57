// Pieces the native backend's source files share: its error id, path and future helpers.
#pragma once

#include <memory>
#include <string>

#include "backends/native/backend/native_backend.hpp"

namespace strata::backends::native_detail {

inline constexpr int kNativeError = 1300;

inline std::string baseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace strata::backends::native_detail

namespace strata::backends {

// Waits for `future` on the waiter thread (in order with events), then runs `done` on the
// session's thread unless the backend is gone by then.
template <class T, class Done>
void NativeBackend::await(std::future<Result<T>> future, Done done) {
  auto shared = std::make_shared<std::future<Result<T>>>(std::move(future));
  std::weak_ptr<bool> alive = alive_;
  asio::io_context* io = &io_;
  waiter_.push([shared, alive, io, done = std::move(done)]() mutable {
    auto result = std::make_shared<Result<T>>(shared->get());
    asio::post(*io, [alive, result, done = std::move(done)]() mutable {
      if (!alive.expired()) done(std::move(*result));
    });
  });
}

}  // namespace strata::backends
