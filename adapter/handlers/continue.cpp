// continue: resumes one thread (singleThread) or all of them.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class ContinueHandler final : public TypedHandler<protocol::ContinueArguments> {
 public:
  std::string_view command() const override { return "continue"; }

 protected:
  void run(Session& session, const protocol::ContinueArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    session.resumed();
    (*backend)->resume(args.threadId, args.singleThread.value_or(false),
                       [respond](Result<bool> r) {
                         if (!r) return respond(r.takeError());
                         respond(body(protocol::ContinueResponseBody{*r}));
                       });
  }
};

}  // namespace

std::unique_ptr<Handler> makeContinueHandler() { return std::make_unique<ContinueHandler>(); }

}  // namespace strata::adapter
