// Envelopes: parse, serialise, and what is salvaged from broken messages.
#include <doctest/doctest.h>

#include "strata/protocol/messages.hpp"

using namespace strata::protocol;

TEST_CASE("a request parses with its arguments; absent arguments are null") {
  auto m = parseMessage(R"({"seq":3,"type":"request","command":"launch","arguments":{"program":"/x"}})");
  auto& r = std::get<Request>(std::get<Message>(m));
  CHECK(r.seq == 3);
  CHECK(r.command == "launch");
  CHECK(r.arguments.at("program").as_string() == "/x");
  auto n = parseMessage(R"({"seq":4,"type":"request","command":"threads"})");
  CHECK(std::get<Request>(std::get<Message>(n)).arguments.is_null());
}

TEST_CASE("broken messages say why, and keep the seq when a request can still be answered") {
  auto bad = std::get<ParseFailure>(parseMessage("{\"seq\":1,"));
  CHECK(bad.error.message.rfind("malformed JSON", 0) == 0);
  CHECK_FALSE(bad.seq);
  auto wrongType = std::get<ParseFailure>(parseMessage(R"({"seq":9,"type":"request","command":7})"));
  CHECK(wrongType.seq == 9);
  CHECK(wrongType.error.message == "malformed request: command: expected a string, got an integer");
  auto noType = std::get<ParseFailure>(parseMessage(R"({"seq":2})"));
  CHECK(noType.error.message == "malformed message: type: required field is missing");
  auto array = std::get<ParseFailure>(parseMessage("[1,2]"));
  CHECK(array.error.message == "a message must be a JSON object, got an array");
  auto unknown = std::get<ParseFailure>(parseMessage(R"({"seq":2,"type":"note"})"));
  CHECK(unknown.error.message.find("got 'note'") != std::string::npos);
  std::string deep(200, '[');
  CHECK(std::holds_alternative<ParseFailure>(parseMessage(deep)));
}

TEST_CASE("responses leave out what is absent; failures always carry a body") {
  Response ok{5, 3, true, "threads", {}, nullptr};
  CHECK(strata::protocol::serialize(toJson(ok)) == R"({"seq":5,"type":"response","request_seq":3,"success":true,"command":"threads"})");
  strata::Error e{strata::errors::kUnsupportedRequest, "nope", false};
  Response fail{6, 4, false, "x", e.message, errorBody(e)};
  CHECK(strata::protocol::serialize(toJson(fail)) ==
        R"({"seq":6,"type":"response","request_seq":4,"success":false,"command":"x","message":"nope","body":{"error":{"id":1003,"format":"nope","showUser":false}}})");
}

TEST_CASE("serialized messages are valid UTF-8 whatever bytes a backend put in their strings") {
  // A path or a value read from the debuggee need not be UTF-8; the client's parser may refuse it.
  json::value v = json::object{{"path\xff", "/tmp/caf\xe9/x"}, {"text", "cut \xe2\x82"}, {"ok", "\xe2\x9c\x93"}};
  CHECK(strata::protocol::serialize(v) ==
        "{\"path\xEF\xBF\xBD\":\"/tmp/caf\xEF\xBF\xBD/x\",\"text\":\"cut \xEF\xBF\xBD\xEF\xBF\xBD\",\"ok\":\"\xe2\x9c\x93\"}");
}

TEST_CASE("UTF-8 sanitising keeps valid text, replaces invalid bytes, carries split sequences") {
  CHECK(sanitizeUtf8("héllo ✓") == "héllo ✓");
  CHECK(sanitizeUtf8("a\xff" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(sanitizeUtf8("\xed\xa0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(sanitizeUtf8("\xc0\xaf") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
  std::string carry;
  std::string check = "\xe2\x9c\x93";
  CHECK(sanitizeUtf8("x" + check.substr(0, 2), &carry) == "x");
  CHECK(carry == check.substr(0, 2));
  CHECK(sanitizeUtf8(check.substr(2) + "y", &carry) == check + "y");
  CHECK(carry.empty());
}
