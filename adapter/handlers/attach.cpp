// attach: to a native process by pid (ptrace), or to a debuggee that waits for a debugger
// (`python -m strata --listen`).
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
    spec.stopOnEntry = args.stopOnEntry.value_or(false);
    if (!args.processId.is_null()) {
      // Native attach by pid: a number, or a string of digits (what "${command:pickProcess}" gives).
      auto pid = processId(args.processId);
      if (!pid) return respond(pid.takeError());
      spec.processId = *pid;
      return start(session, spec, respond);
    }
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
                           "--listen 5678), or arguments.processId to attach to a running native process",
                           true});
    if (*port <= 0 || *port > 65535)
      return respond(Error{errors::kBadArguments,
                           "invalid 'attach' request: arguments.connect.port: " +
                               std::to_string(*port) + " is not a TCP port",
                           true});
    spec.port = static_cast<std::uint16_t>(*port);
    spec.justMyCode = args.justMyCode.value_or(true);
    start(session, spec, respond);
  }

 private:
  static Result<std::int64_t> processId(const json::value& v) {
    auto bad = [&] {
      return Error{errors::kBadArguments,
                   "invalid 'attach' request: arguments.processId: expected a process id (a number such as "
                   "4242), got " + json::serialize(v),
                   true};
    };
    if (v.is_int64()) return v.as_int64() > 0 ? Result<std::int64_t>(v.as_int64()) : Result<std::int64_t>(bad());
    if (v.is_uint64()) return v.as_uint64() < (1ull << 31) ? Result<std::int64_t>(static_cast<std::int64_t>(v.as_uint64())) : Result<std::int64_t>(bad());
    if (v.is_string()) {
      std::string text(v.as_string());
      if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) return bad();
      std::int64_t n = std::stoll(text);
      if (n <= 0) return bad();
      return n;
    }
    return bad();
  }

  void start(Session& session, const backends::AttachSpec& spec, Responder respond) {
    auto backend = session.createAttachBackend(spec);
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
