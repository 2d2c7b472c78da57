// terminate: asks the debuggee to end gracefully (SIGTERM); `exited`/`terminated` follow.
#include "adapter/session.hpp"

namespace strata::adapter {
namespace {

class TerminateHandler final : public TypedHandler<protocol::TerminateArguments> {
 public:
  std::string_view command() const override { return "terminate"; }
  void declare(protocol::Capabilities& caps) const override { caps.supportsTerminateRequest = true; }

 protected:
  void run(Session& session, const protocol::TerminateArguments&, Responder respond) override {
    if (!session.backend() || session.debuggeeEnded()) {
      // Nothing to end: still tell the client the session is over.
      respond(json::value(nullptr));
      session.sendEvent("terminated");
      return;
    }
    session.backend()->terminate(false, [respond](Result<void> r) {
      if (!r) return respond(r.takeError());
      respond(json::value(nullptr));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeTerminateHandler() { return std::make_unique<TerminateHandler>(); }

}  // namespace strata::adapter
