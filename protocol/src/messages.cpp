// Envelope parsing: strict about types, forgiving about extra fields.
#include "strata/protocol/messages.hpp"

#include <cmath>

namespace strata::protocol {
namespace {

// Boost.JSON turns a number beyond double's range (1e400) into infinity and would write it
// back as `Infinity`, which is not JSON: refuse it where it enters, naming where it is.
bool findNonFinite(const json::value& v, std::string& path) {
  if (v.is_double()) return !std::isfinite(v.get_double());
  if (v.is_array()) {
    const auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (findNonFinite(a[i], path)) {
        path = "[" + std::to_string(i) + "]" + path;
        return true;
      }
    }
  } else if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      if (findNonFinite(kv.value(), path)) {
        path = "." + std::string(kv.key()) + path;
        return true;
      }
    }
  }
  return false;
}

// What every outgoing message starts with: its sequence number and type.
json::object envelope(std::int64_t seq, std::string_view type) {
  json::object o;
  o["seq"] = seq;
  o["type"] = type;
  return o;
}

}  // namespace

std::variant<Message, ParseFailure> parseMessage(std::string_view body) {
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = 128;
  json::value v = json::parse(body, ec, {}, opts);
  if (ec) return ParseFailure{Error{errors::kMalformedMessage, "malformed JSON: " + ec.message(), false}, {}, {}};
  if (!v.is_object())
    return ParseFailure{Error{errors::kMalformedMessage, std::string("a message must be a JSON object, got ") + kindName(v), false}, {}, {}};
  const auto& o = v.as_object();

  ParseFailure salvage{Error{errors::kMalformedMessage, "", false}, {}, {}};
  if (auto it = o.find("seq"); it != o.end() && it->value().is_int64() && it->value().get_int64() > 0)
    salvage.seq = it->value().get_int64();
  if (auto it = o.find("command"); it != o.end() && it->value().is_string())
    salvage.command = std::string(it->value().get_string());
  if (std::string where; findNonFinite(v, where)) {
    salvage.error.message = "malformed JSON: number out of range at " + where.substr(1);
    if (auto it = o.find("type"); it == o.end() || !it->value().is_string() ||
                                   it->value().get_string() != "request")
      salvage.seq.reset();
    return salvage;
  }

  Reader r(v, "");
  std::string type;
  r.required("type", type);
  std::int64_t seq = 0;
  r.required("seq", seq);
  if (r.ok() && seq < 0) r.fail("seq", "must not be negative");
  if (!r.ok()) {
    salvage.error.message = "malformed message: " + r.error().message;
    if (type != "request") salvage.seq.reset();
    return salvage;
  }
  // A member of any JSON type, null when absent.
  auto member = [&](std::string_view key) {
    auto it = o.find(key);
    return it != o.end() ? it->value() : json::value();
  };
  // The message once its fields are read, or the first field that was wrong.
  auto finish = [&](std::string_view kind, auto&& message) -> std::variant<Message, ParseFailure> {
    if (!r.ok()) {
      salvage.error.message = "malformed " + std::string(kind) + ": " + r.error().message;
      return salvage;
    }
    return Message{std::move(message)};
  };
  if (type == "request") {
    Request q;
    q.seq = seq;
    r.required("command", q.command);
    q.arguments = member("arguments");
    return finish("request", q);
  }
  salvage.seq.reset();
  if (type == "response") {
    Response p;
    p.seq = seq;
    r.required("request_seq", p.request_seq);
    r.required("success", p.success);
    r.required("command", p.command);
    r.optional("message", p.message);
    p.body = member("body");
    return finish("response", p);
  }
  if (type == "event") {
    Event e;
    e.seq = seq;
    r.required("event", e.event);
    e.body = member("body");
    return finish("event", e);
  }
  salvage.error.message = "malformed message: type: expected 'request', 'response' or 'event', got '" + type + "'";
  return salvage;
}

json::value toJson(const Request& r) {
  json::object o = envelope(r.seq, "request");
  o["command"] = r.command;
  if (!r.arguments.is_null()) o["arguments"] = r.arguments;
  return o;
}

json::value toJson(const Response& r) {
  json::object o = envelope(r.seq, "response");
  o["request_seq"] = r.request_seq;
  o["success"] = r.success;
  o["command"] = r.command;
  if (r.message) o["message"] = *r.message;
  if (!r.body.is_null()) o["body"] = r.body;
  return o;
}

json::value toJson(const Event& e) {
  json::object o = envelope(e.seq, "event");
  o["event"] = e.event;
  if (!e.body.is_null()) o["body"] = e.body;
  return o;
}

json::value toJson(const Message& m) {
  return std::visit([](const auto& x) { return toJson(x); }, m);
}

json::value errorBody(const Error& e) {
  json::object err;
  err["id"] = toInt(e.id);
  err["format"] = e.message;
  err["showUser"] = e.showUser;
  return json::object{{"error", std::move(err)}};
}

}  // namespace strata::protocol
