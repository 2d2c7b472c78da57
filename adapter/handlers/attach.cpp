// attach: connects to a debuggee that waits for a debugger (`python -m strata --listen`).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class AttachHandler final : public TypedHandler<protocol::AttachRequestArguments> {
 public:
  std::string_view command() const override { return "attach"; }

 protected:
  void run(Session& session, const protocol::AttachRequestArguments& args, Responder respond) override {
    if (session.backend())
      return respond(Error{errors::kWrongState, "this session already has a debuggee", true});
    backends::AttachSpec spec;
    std::optional<std::int64_t> port = args.port;
    if (args.host) spec.host = *args.host;
    if (args.connect) {
      if (args.connect->host) spec.host = *args.connect->host;
      if (args.connect->port) port = args.connect->port;
    }
    if (!port)
      return respond(Error{errors::kBadArguments,
                           "invalid 'attach' request: arguments.connect.port: required field is "
                           "missing (the port the program listens on, e.g. python -m strata "
                           "--listen 5678)",
                           true});
    if (*port <= 0 || *port > 65535)
      return respond(Error{errors::kBadArguments,
                           "invalid 'attach' request: arguments.connect.port: " +
                               std::to_string(*port) + " is not a TCP port",
                           true});
    spec.port = static_cast<std::uint16_t>(*port);
    spec.justMyCode = args.justMyCode.value_or(true);
    spec.stopOnEntry = args.stopOnEntry.value_or(false);
    auto backend = session.createAttachBackend();
    auto* raw = backend.get();
    session.setBackend(std::move(backend), false);
    auto self = session.shared_from_this();
    raw->attach(spec, [self, respond](Result<void> r) {
      if (!r) {
        Error e = r.takeError();
        e.message = "cannot attach: " + e.message;
        e.showUser = true;
        return respond(std::move(e));
      }
      respond(json::value(nullptr));
      self->announceBackendCapabilities();
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeAttachHandler() { return std::make_unique<AttachHandler>(); }

}  // namespace strata::adapter
