// Base64 of readMemory/writeMemory bodies: RFC 4648 vectors, round trips, bad input.
#include <doctest/doctest.h>

#include <cstring>

#include "adapter/handlers/base64.hpp"

using namespace strata::adapter;

TEST_CASE("base64 encodes the RFC 4648 vectors and decodes them back") {
  const char* plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char* coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; ++i) {
    std::vector<std::uint8_t> bytes(plain[i], plain[i] + std::strlen(plain[i]));
    CHECK(base64Encode(bytes) == coded[i]);
    auto back = base64Decode(coded[i]);
    REQUIRE(back);
    CHECK(*back == bytes);
  }
  std::vector<std::uint8_t> all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<std::uint8_t>(b));
  CHECK(*base64Decode(base64Encode(all)) == all);
}

TEST_CASE("base64 rejects what is not base64") {
  CHECK_FALSE(base64Decode("Zm9v!"));
  CHECK_FALSE(base64Decode("Zg==Zg"));
  CHECK(base64Decode("Zm9v\nYmFy")->size() == 6);
}
