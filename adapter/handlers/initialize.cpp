// initialize: records what the client can do and answers what every Strata backend can.
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
    // `initialized` follows launch/attach (Session::backendStarted): only then are the
    // program's capabilities and exception filters known, which configuration depends on.
  }
};

}  // namespace

std::unique_ptr<Handler> makeInitializeHandler() { return std::make_unique<InitializeHandler>(); }

}  // namespace strata::adapter
