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
    // Before launch the Python filters (announced at initialize) apply; afterwards the backend's.
    std::vector<std::string> known = kFilters;
    if (session.backend()) {
      auto offered = session.backend()->features().exceptionFilters;
      if (!offered.empty()) {
        known.clear();
        for (const auto& f : offered) known.push_back(f.filter);
      }
    }
    for (const auto& s : specs)
      if (std::find(known.begin(), known.end(), s.filterId) == known.end()) {
        std::string names;
        for (std::size_t i = 0; i < known.size(); ++i)
          names += (i == 0 ? "'" : i + 1 == known.size() ? " and '" : ", '") + known[i] + "'";
        return respond(Error{errors::kBadArguments,
                             "unknown exception filter '" + s.filterId + "' (Strata has " + names + ")", false});
      }
    if (!session.backend() || session.debuggeeEnded()) return respond(body(notYetLaunched(specs.size())));
    session.backend()->setExceptionBreakpoints(specs, breakpointsReply(session, session.backend(), respond));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetExceptionBreakpointsHandler() {
  return std::make_unique<SetExceptionBreakpointsHandler>();
}

}  // namespace strata::adapter
