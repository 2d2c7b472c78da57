// The base of every request handler: one class per DAP request, each in its own file under
// handlers/, each declaring the capabilities it provides.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "strata/error_ids.hpp"
#include "strata/protocol/messages.hpp"
#include "strata/protocol/debug_types.hpp"
#include "strata/protocol/requests.hpp"
#include "strata/protocol/types.hpp"

namespace strata::adapter {

class Session;
namespace json = boost::json;

// Answers one request exactly once: a body (null for none) or an error.
using Responder = std::function<void(Result<json::value>)>;

class Handler {
 public:
  virtual ~Handler() = default;
  virtual std::string_view command() const = 0;
  // Adds what this handler makes possible to the initialize response.
  virtual void declare(protocol::Capabilities& caps) const { (void)caps; }
  // Whether a `cancel` may abort this request while it is in flight. If so, the session
  // answers it "cancelled" and then calls cancelled(), which undoes what the request started.
  virtual bool cancellable() const { return false; }
  virtual void cancelled(Session& session) const { (void)session; }
  // The struct the arguments decode into (void: not read), checked against protocol's
  // request list so the fuzzers cover every decoder a handler uses.
  virtual const std::type_info& argumentsType() const { return typeid(void); }
  virtual void handle(Session& session, const protocol::Request& request, Responder respond) = 0;
};

// A handler with typed arguments: decoding errors name the field ("arguments.source.path").
template <class Args>
class TypedHandler : public Handler {
  static_assert(protocol::isRequestArguments<Args>(),
                "list the request in protocol/include/strata/protocol/requests.hpp");

 public:
  const std::type_info& argumentsType() const final { return typeid(Args); }
  void handle(Session& session, const protocol::Request& request, Responder respond) final {
    static const json::value empty = json::object();
    const json::value& raw = request.arguments.is_null() ? empty : request.arguments;
    auto args = protocol::decode<Args>(raw, "arguments");
    if (!args) {
      Error e = args.takeError();
      e.id = errors::kBadArguments;
      e.message = "invalid '" + request.command + "' request: " + e.message;
      return respond(std::move(e));
    }
    run(session, *args, std::move(respond));
  }

 protected:
  virtual void run(Session& session, const Args& args, Responder respond) = 0;
};

// Encodes a typed body for a Responder.
template <class T>
Result<json::value> body(const T& value) {
  return json::value_from(value);
}

std::vector<std::unique_ptr<Handler>> makeHandlers();

}  // namespace strata::adapter
