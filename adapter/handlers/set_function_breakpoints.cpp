// setFunctionBreakpoints: replaces the breakpoints on function names (`f`, `mod.f`, `C.m`).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class SetFunctionBreakpointsHandler final
    : public TypedHandler<protocol::SetFunctionBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setFunctionBreakpoints"; }

 protected:
  void run(Session& session, const protocol::SetFunctionBreakpointsArguments& args,
           Responder respond) override {
    auto specs = toSpecs(args);
    if (!session.backend()) return respond(body(notYetLaunched(session.keepEarly(backends::BreakpointSet::function(specs)))));
    if (session.debuggeeEnded()) return respond(body(notYetLaunched(specs.size())));
    session.backend()->setBreakpoints(backends::BreakpointSet::function(specs), breakpointsReply(session, session.backend(), respond));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetFunctionBreakpointsHandler() {
  return std::make_unique<SetFunctionBreakpointsHandler>();
}

}  // namespace strata::adapter
