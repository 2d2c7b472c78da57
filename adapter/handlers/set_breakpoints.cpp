// setBreakpoints: replaces the breakpoints of one source file.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class SetBreakpointsHandler final : public TypedHandler<protocol::SetBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setBreakpoints"; }

 protected:
  void run(Session& session, const protocol::SetBreakpointsArguments& args, Responder respond) override {
    auto specs = toSpecs(args);
    if (!args.source.path)
      return respond(Error{errors::kBadArguments,
                           "invalid 'setBreakpoints' request: arguments.source.path: required field "
                           "is missing (Strata sets breakpoints by path)",
                           false});
    auto source = args.source;
    auto self = session.shared_from_this();
    auto* owner = session.backend();
    auto reply = [self, owner, respond, source](Result<std::vector<backends::BreakpointReport>> r) {
      if (!r) return respond(r.takeError());
      protocol::BreakpointsBody out;
      for (const auto& s : *r) {
        protocol::Breakpoint b = toProtocol(*self, owner, s);
        b.source = source;
        out.breakpoints.push_back(std::move(b));
      }
      respond(body(out));
    };
    if (!session.backend()) {
      // Before launch there is nothing to place them in yet: kept, placed at launch/attach.
      auto ids = session.keepEarlyBreakpoints(*args.source.path, specs);
      auto out = notYetLaunched(ids);
      for (std::size_t i = 0; i < specs.size(); ++i) {
        out.breakpoints[i].line = specs[i].line;
        out.breakpoints[i].source = source;
      }
      return respond(body(out));
    }
    session.backend()->setSourceBreakpoints(*args.source.path, specs, reply);
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetBreakpointsHandler() { return std::make_unique<SetBreakpointsHandler>(); }

}  // namespace strata::adapter
