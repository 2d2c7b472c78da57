// setInstructionBreakpoints: replaces the breakpoints on instruction addresses (disassembly view).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class SetInstructionBreakpointsHandler final : public TypedHandler<protocol::SetInstructionBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setInstructionBreakpoints"; }

 protected:
  void run(Session& session, const protocol::SetInstructionBreakpointsArguments& args, Responder respond) override {
    auto specs = toSpecs(args);
    if (!session.backend() || session.debuggeeEnded()) return respond(body(notYetLaunched(specs.size())));
    session.backend()->setInstructionBreakpoints(specs, breakpointsReply(session, session.backend(), respond));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetInstructionBreakpointsHandler() {
  return std::make_unique<SetInstructionBreakpointsHandler>();
}

}  // namespace strata::adapter
