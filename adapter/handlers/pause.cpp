// pause: asks a running thread (and with it the program) to stop; a `stopped` event follows.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class PauseHandler final : public TypedHandler<protocol::PauseArguments> {
 public:
  std::string_view command() const override { return "pause"; }

 protected:
  void run(Session& session, const protocol::PauseArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    (*backend)->pause(args.threadId, [respond](Result<void> r) {
      if (!r) return respond(r.takeError());
      respond(json::value(nullptr));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makePauseHandler() { return std::make_unique<PauseHandler>(); }

}  // namespace strata::adapter
