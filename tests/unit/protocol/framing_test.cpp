// Framing: split and coalesced input, exact \r\n, and every way a header can be wrong.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "strata/protocol/framing.hpp"

using strata::protocol::FrameDecoder;
using strata::protocol::encodeFrame;
using Status = FrameDecoder::Status;

namespace {
std::vector<std::string> drain(FrameDecoder& d, std::string* error = nullptr) {
  std::vector<std::string> out;
  std::string body;
  for (;;) {
    auto s = d.next(body);
    if (s == Status::NeedMore) break;
    if (s == Status::Error) {
      if (error) *error = body;
      break;
    }
    out.push_back(body);
  }
  return out;
}
}  // namespace

TEST_CASE("a frame fed byte by byte, and several frames fed at once") {
  std::string two = encodeFrame("{\"a\":1}") + encodeFrame("{\"b\":\"é\"}");
  FrameDecoder byByte;
  std::vector<std::string> got;
  for (char c : two) {
    byByte.feed(std::string_view(&c, 1));
    for (auto& b : drain(byByte)) got.push_back(b);
  }
  CHECK(got == std::vector<std::string>{"{\"a\":1}", "{\"b\":\"é\"}"});
  FrameDecoder atOnce;
  atOnce.feed(two + two);
  CHECK(drain(atOnce).size() == 4);
}

TEST_CASE("extra headers are ignored, names case-insensitive, empty bodies allowed") {
  FrameDecoder d;
  d.feed("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:  2\r\n\r\n{}");
  d.feed("Content-Length: 0\r\n\r\n");
  CHECK(drain(d) == std::vector<std::string>{"{}", ""});
}

TEST_CASE("bad headers are errors with a reason, and the decoder stays failed") {
  struct Case { const char* input; const char* reason; };
  Case cases[] = {
      {"Content-Length: -1\r\n\r\n", "invalid Content-Length '-1'"},
      {"Content-Length: 12abc\r\n\r\n", "invalid Content-Length '12abc'"},
      {"Content-Length: \r\n\r\n", "invalid Content-Length ''"},
      {"Content-Length: 67108865\r\n\r\n", "exceeds the limit of 67108864 bytes"},
      {"Content-Length: 99999999999\r\n\r\n", "invalid Content-Length"},
      {"Content-Type: x\r\n\r\n{}", "no Content-Length"},
      {"Content-Length: 2\n\n{}", "bare \\n"},
      {"garbage\r\n\r\n", "malformed header line 'garbage'"},
      {"Content-Length: 2\r\nContent-Length: 3\r\n\r\n", "conflicting Content-Length"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.input);
    FrameDecoder d;
    d.feed(c.input);
    std::string error;
    CHECK(drain(d, &error).empty());
    CHECK(error.find(c.reason) != std::string::npos);
    CHECK(d.failed());
    d.feed(encodeFrame("{}"));
    CHECK(drain(d).empty());
  }
}

TEST_CASE("a header that never ends is cut off instead of buffering forever") {
  FrameDecoder d;
  std::string junk(20000, 'x');
  d.feed(junk);
  std::string error;
  drain(d, &error);
  CHECK(error.find("header section longer than") != std::string::npos);
  CHECK(d.buffered() == 0);
}

TEST_CASE("the maximum length is accepted and waits for its body without allocating it up front") {
  FrameDecoder d;
  d.feed("Content-Length: 67108864\r\n\r\nabc");
  CHECK(drain(d).empty());
  CHECK_FALSE(d.failed());
  CHECK(d.buffered() == 3);
}
