// setExceptionBreakpoints: which exceptions stop the program (the backend's filters: Python's
// raised/uncaught/userUnhandled, native's fault signals), each optionally with a condition.
#include "adapter/capabilities.hpp"
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class SetExceptionBreakpointsHandler final
    : public TypedHandler<protocol::SetExceptionBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setExceptionBreakpoints"; }

 protected:
  void run(Session& session, const protocol::SetExceptionBreakpointsArguments& args,
           Responder respond) override {
    auto specs = toSpecs(args);
    // Filters belong to the backend that raises them: before launch any backend's are kept
    // (the backend then reports those it lacks), afterwards only the chosen backend's.
    std::vector<std::string> known;
    for (const auto& f : session.backend() ? session.backend()->features().exceptionFilters
                                           : exceptionFiltersOfEveryBackend(session.debuggers()))
      known.push_back(f.filter);
    for (const auto& s : specs)
      if (std::find(known.begin(), known.end(), s.filterId) == known.end()) {
        std::string names;
        for (std::size_t i = 0; i < known.size(); ++i)
          names += (i == 0 ? "'" : i + 1 == known.size() ? " and '" : ", '") + known[i] + "'";
        if (known.empty()) names = "none";
        return respond(Error{errors::kBadArguments,
                             "unknown exception filter '" + s.filterId + "' (the " +
                                 (session.backend() ? session.backend()->name() + " backend" : std::string("adapter")) +
                                 " has " + names + ")",
                             false});
      }
    if (!session.backend()) return respond(body(notYetLaunched(session.keepEarly(backends::BreakpointSet::exception(specs)))));
    if (session.debuggeeEnded()) return respond(body(notYetLaunched(specs.size())));
    session.backend()->setBreakpoints(backends::BreakpointSet::exception(specs), breakpointsReply(session, session.backend(), respond));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetExceptionBreakpointsHandler() {
  return std::make_unique<SetExceptionBreakpointsHandler>();
}

}  // namespace strata::adapter
