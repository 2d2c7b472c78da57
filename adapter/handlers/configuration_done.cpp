// configurationDone: the client has sent its breakpoints; the debuggee may run.
#include "adapter/session.hpp"

namespace strata::adapter {
namespace {

class ConfigurationDoneHandler final : public Handler {
 public:
  std::string_view command() const override { return "configurationDone"; }
  void declare(protocol::Capabilities& caps) const override {
    caps.supportsConfigurationDoneRequest = true;
  }
  void handle(Session& session, const protocol::Request&, Responder respond) override {
    if (!session.backend() || session.debuggeeEnded()) return respond(json::value(nullptr));
    // The program runs from here, unless it has already stopped (an attach that hit a
    // breakpoint set early) or stops at its entry, which a stop event will say.
    if (!session.sawStop()) session.threadsResumed(0, true);
    session.backend()->configurationDone([respond](Result<void> r) {
      if (!r) return respond(r.takeError());
      respond(json::value(nullptr));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeConfigurationDoneHandler() {
  return std::make_unique<ConfigurationDoneHandler>();
}

}  // namespace strata::adapter
