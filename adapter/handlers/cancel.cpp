// cancel: answers a still-pending cancellable request with "cancelled". Always succeeds:
// the specification makes cancellation a hint, and a finished request is no error.
#include "adapter/session.hpp"

namespace strata::adapter {
namespace {

class CancelHandler final : public TypedHandler<protocol::CancelArguments> {
 public:
  std::string_view command() const override { return "cancel"; }
  void declare(protocol::Capabilities& caps) const override { caps.supportsCancelRequest = true; }

 protected:
  void run(Session& session, const protocol::CancelArguments& args, Responder respond) override {
    if (args.requestId) session.cancel(*args.requestId);
    respond(json::value(nullptr));
  }
};

}  // namespace

std::unique_ptr<Handler> makeCancelHandler() { return std::make_unique<CancelHandler>(); }

}  // namespace strata::adapter
