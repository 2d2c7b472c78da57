// setFunctionBreakpoints: replaces the breakpoints on function names (`f`, `mod.f`, `C.m`).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class SetFunctionBreakpointsHandler final
    : public TypedHandler<protocol::SetFunctionBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setFunctionBreakpoints"; }
  void declare(protocol::Capabilities& caps) const override { caps.supportsFunctionBreakpoints = true; }

 protected:
  void run(Session& session, const protocol::SetFunctionBreakpointsArguments& args,
           Responder respond) override {
    std::vector<backends::FunctionBreakpointSpec> specs;
    for (const auto& b : args.breakpoints) specs.push_back({b.name, b.condition, b.hitCondition});
    if (!session.backend() || session.debuggeeEnded()) {
      protocol::BreakpointsBody out;
      for (std::size_t i = 0; i < specs.size(); ++i) {
        protocol::Breakpoint b;
        b.message = "no program has been launched yet";
        b.reason = "pending";
        out.breakpoints.push_back(std::move(b));
      }
      return respond(body(out));
    }
    auto self = session.shared_from_this();
    auto* owner = session.backend();
    owner->setFunctionBreakpoints(specs, [self, owner, respond](Result<std::vector<backends::BreakpointState>> r) {
      if (!r) return respond(r.takeError());
      protocol::BreakpointsBody out;
      for (const auto& s : *r) out.breakpoints.push_back(self->toProtocol(owner, s));
      respond(body(out));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetFunctionBreakpointsHandler() {
  return std::make_unique<SetFunctionBreakpointsHandler>();
}

}  // namespace strata::adapter
