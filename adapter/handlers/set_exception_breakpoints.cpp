// setExceptionBreakpoints: which exceptions stop the program (raised, uncaught,
// userUnhandled), each optionally limited by a condition naming exception types.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

const std::vector<std::string> kFilters = {"raised", "uncaught", "userUnhandled"};

class SetExceptionBreakpointsHandler final
    : public TypedHandler<protocol::SetExceptionBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setExceptionBreakpoints"; }
  void declare(protocol::Capabilities& caps) const override {
    const char* conditionText = "Exception types to stop on, e.g. ValueError, KeyError";
    caps.exceptionBreakpointFilters = std::vector<protocol::ExceptionBreakpointsFilter>{
        {"raised", "Raised Exceptions", "Stop whenever an exception is raised", false, true, conditionText},
        {"uncaught", "Uncaught Exceptions", "Stop where an exception nothing catches is raised", true,
         true, conditionText},
        {"userUnhandled", "User Uncaught Exceptions",
         "Stop when an exception leaves user code into library code", false, true, conditionText}};
    caps.supportsExceptionFilterOptions = true;
  }

 protected:
  void run(Session& session, const protocol::SetExceptionBreakpointsArguments& args,
           Responder respond) override {
    std::vector<backends::ExceptionFilterSpec> specs;
    for (const auto& f : args.filters) specs.push_back({f, std::nullopt});
    if (args.filterOptions)
      for (const auto& o : *args.filterOptions) specs.push_back({o.filterId, o.condition});
    for (const auto& s : specs)
      if (std::find(kFilters.begin(), kFilters.end(), s.filterId) == kFilters.end())
        return respond(Error{errors::kBadArguments,
                             "unknown exception filter '" + s.filterId +
                                 "' (Strata has 'raised', 'uncaught' and 'userUnhandled')",
                             false});
    if (!session.backend()) return respond(body(notYetLaunched(session.keepEarlyExceptionFilters(specs))));
    if (session.debuggeeEnded()) return respond(body(notYetLaunched(specs.size())));
    session.backend()->setExceptionBreakpoints(specs, breakpointsReply(session, session.backend(), respond));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetExceptionBreakpointsHandler() {
  return std::make_unique<SetExceptionBreakpointsHandler>();
}

}  // namespace strata::adapter
