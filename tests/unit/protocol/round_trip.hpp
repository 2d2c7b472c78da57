// Test support: a protocol struct decoded from JSON text encodes back to the same JSON.
#pragma once

#include <doctest/doctest.h>

#include "strata/protocol/debug_types.hpp"

namespace strata::protocol::testing {

template <class T>
void roundTrip(const char* text) {
  CAPTURE(text);
  json::value in = json::parse(text);
  auto decoded = decode<T>(in, "arguments");
  REQUIRE(decoded.ok());
  CHECK(json::value_from(*decoded) == in);
}

}  // namespace strata::protocol::testing
