// continue: resumes one thread (singleThread) or all of them.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class ContinueHandler final : public TypedHandler<protocol::ContinueArguments> {
 public:
  std::string_view command() const override { return "continue"; }

 protected:
  void run(Session& session, const protocol::ContinueArguments& args, Responder respond) override {
    auto backend = threadBackend(session, args.threadId);
    if (!backend) return respond(backend.takeError());
    session.resumed();
    // Running from now on, as the backend may report a stop before its answer arrives.
    auto before = session.runState();
    bool single = args.singleThread.value_or(false);
    session.threadsResumed(args.threadId, !single);
    auto self = session.shared_from_this();
    std::int64_t tid = args.threadId;
    (*backend)->resume(tid, single, [self, before, tid, respond](Result<bool> r) {
      if (!r) {
        self->setRunState(before);
        return respond(r.takeError());
      }
      if (*r) self->threadsResumed(tid, true);  // all threads went, whatever was asked
      respond(body(protocol::ContinueResponseBody{*r}));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeContinueHandler() { return std::make_unique<ContinueHandler>(); }

}  // namespace strata::adapter
