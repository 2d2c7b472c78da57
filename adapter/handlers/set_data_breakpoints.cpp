// setDataBreakpoints: replaces every data breakpoint (hardware watchpoints on native programs).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class SetDataBreakpointsHandler final : public TypedHandler<protocol::SetDataBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setDataBreakpoints"; }

 protected:
  void run(Session& session, const protocol::SetDataBreakpointsArguments& args, Responder respond) override {
    auto specs = toSpecs(args);
    if (!session.backend() || session.debuggeeEnded()) return respond(body(notYetLaunched(specs.size())));
    session.backend()->setDataBreakpoints(specs, breakpointsReply(session, session.backend(), respond));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetDataBreakpointsHandler() { return std::make_unique<SetDataBreakpointsHandler>(); }

}  // namespace strata::adapter
