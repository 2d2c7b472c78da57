// DAP envelopes: requests, responses and events, parsed from and written to JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "strata/protocol/json.hpp"

namespace strata::protocol {

struct Request {
  std::int64_t seq = 0;
  std::string command;
  json::value arguments;  // null when absent
};

struct Response {
  std::int64_t seq = 0;
  std::int64_t request_seq = 0;
  bool success = true;
  std::string command;
  std::optional<std::string> message;
  json::value body;  // omitted when null
};

struct Event {
  std::int64_t seq = 0;
  std::string event;
  json::value body;  // omitted when null
};

using Message = std::variant<Request, Response, Event>;

// What could be salvaged from a message that failed to parse, so an error can still be
// answered to the right request.
struct ParseFailure {
  Error error;
  std::optional<std::int64_t> seq;  // present when the message was a request with a usable seq
  std::string command;
};

// Parses one framed body. On failure, says why and what of the envelope was readable.
std::variant<Message, ParseFailure> parseMessage(std::string_view body);

json::value toJson(const Request& r);
json::value toJson(const Response& r);
json::value toJson(const Event& e);
json::value toJson(const Message& m);

// The body of a failed response: {"error": {"id", "format", "showUser"}}. The DAP schema
// requires a body on ErrorResponse, so every failure carries one.
json::value errorBody(const Error& e);

}  // namespace strata::protocol
