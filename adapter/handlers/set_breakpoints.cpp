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
    const auto& source = args.source;
    if (!session.backend()) {
      // Before launch there is nothing to place them in yet: kept, placed at launch/attach.
      auto ids = session.keepEarly(backends::BreakpointSet::source(*args.source.path, specs));
      auto out = notYetLaunched(ids);
      for (std::size_t i = 0; i < specs.size(); ++i) {
        out.breakpoints[i].line = specs[i].line;
        out.breakpoints[i].source = source;
      }
      return respond(body(out));
    }
    // The debuggee's name for the file (sourceMap); the answer names the client's source.
    session.backend()->setBreakpoints(backends::BreakpointSet::source(session.sourceMap().toDebuggee(*args.source.path), specs),
                                            breakpointsReply(session, session.backend(), std::move(respond), source));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetBreakpointsHandler() { return std::make_unique<SetBreakpointsHandler>(); }

}  // namespace strata::adapter
