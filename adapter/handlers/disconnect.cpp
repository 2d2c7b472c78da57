// disconnect: ends the debug session; terminates a launched debuggee unless told not to, and
// leaves an attached one (or one the client asks to keep) running untouched.
#include "adapter/session.hpp"

namespace strata::adapter {
namespace {

class DisconnectHandler final : public TypedHandler<protocol::DisconnectArguments> {
 public:
  std::string_view command() const override { return "disconnect"; }
  void declare(protocol::Capabilities& caps) const override { caps.supportTerminateDebuggee = true; }

 protected:
  void run(Session& session, const protocol::DisconnectArguments& args, Responder respond) override {
    auto self = session.shared_from_this();
    auto finish = [self, respond](Result<void>) {
      respond(json::value(nullptr));
      self->closeAfterFlush();
    };
    if (!session.backend() || session.debuggeeEnded()) return finish({});
    bool terminate = args.terminateDebuggee.value_or(session.launchedDebuggee());
    if (terminate) return session.backend()->terminate(true, finish);
    session.backend()->detach(finish);
  }
};

}  // namespace

std::unique_ptr<Handler> makeDisconnectHandler() { return std::make_unique<DisconnectHandler>(); }

}  // namespace strata::adapter
