// initialize: records what the client can do, answers what Strata can, then `initialized`.
#include "adapter/session.hpp"

namespace strata::adapter {
namespace {

class InitializeHandler final : public TypedHandler<protocol::InitializeRequestArguments> {
 public:
  std::string_view command() const override { return "initialize"; }

 protected:
  void run(Session& session, const protocol::InitializeRequestArguments& args,
           Responder respond) override {
    if (args.pathFormat && *args.pathFormat != "path")
      return respond(Error{errors::kBadArguments,
                           "invalid 'initialize' request: arguments.pathFormat: Strata supports "
                           "'path' only, got '" + *args.pathFormat + "'",
                           true});
    session.markInitialized(args);
    respond(body(session.capabilities()));
    // Strata takes configuration requests at once; launch may come before or after them.
    session.sendEvent("initialized");
  }
};

}  // namespace

std::unique_ptr<Handler> makeInitializeHandler() { return std::make_unique<InitializeHandler>(); }

}  // namespace strata::adapter
