// setExceptionBreakpoints: no filter exists yet, so any filter named is unknown.
#include "adapter/session.hpp"

namespace strata::adapter {
namespace {

class SetExceptionBreakpointsHandler final
    : public TypedHandler<protocol::SetExceptionBreakpointsArguments> {
 public:
  std::string_view command() const override { return "setExceptionBreakpoints"; }
  void declare(protocol::Capabilities& caps) const override {
    // Advertised empty: clients then show no exception options that would do nothing.
    caps.exceptionBreakpointFilters = std::vector<protocol::ExceptionBreakpointsFilter>{};
  }

 protected:
  void run(Session&, const protocol::SetExceptionBreakpointsArguments& args, Responder respond) override {
    std::vector<std::string> names = args.filters;
    if (args.filterOptions)
      for (const auto& o : *args.filterOptions) names.push_back(o.filterId);
    if (!names.empty())
      return respond(Error{errors::kBadArguments,
                           "unknown exception filter '" + names.front() + "'", false});
    respond(body(protocol::BreakpointsBody{}));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetExceptionBreakpointsHandler() {
  return std::make_unique<SetExceptionBreakpointsHandler>();
}

}  // namespace strata::adapter
