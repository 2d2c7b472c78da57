// Result<T>: a value or an Error{id, message, showUser}; the one way fallible calls report failure.
#pragma once

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "strata/error_ids.hpp"

namespace strata {

// Built only from a named id (the constructor takes one; there is no default), so every error
// a client sees carries a number it can look up in strata/error_ids.hpp.
struct Error {
  Error(ErrorId id, std::string message, bool showUser = true)
      : id(id), message(std::move(message)), showUser(showUser) {}
  ErrorId id;
  std::string message;    // full sentence a user can act on
  bool showUser = true;   // DAP ErrorResponse.body.error.showUser
};

// "open /x: No such file or directory" — the operation plus strerror(errno).
inline Error errnoError(ErrorId id, const std::string& operation, int err = errno) {
  return Error{id, operation + ": " + std::strerror(err), true};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }
  Error&& takeError() { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)) {}
  bool ok() const { return !err_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *err_; }
  Error&& takeError() { return std::move(*err_); }

 private:
  std::optional<Error> err_;
};

}  // namespace strata
