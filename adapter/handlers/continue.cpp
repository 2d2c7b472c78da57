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
    // This thread runs from now on, as the backend may report a stop before its answer arrives;
    // whether the others went too (a backend that stops each process on its own lets them stay),
    // the answer says.
    std::int64_t tid = args.threadId;
    bool single = args.singleThread.value_or(false);
    auto before = session.runState();
    session.threadsRan({tid});
    session.threadsResumed(tid, !single);
    auto self = session.shared_from_this();
    std::uint64_t stops = session.stops();
    (*backend)->resume(tid, single, [self, before, tid, single, stops, respond](Result<bool> r) {
      if (!r) {
        self->setRunState(before);
        return respond(r.takeError());
      }
      // A stop reported meanwhile already says what runs and which ids are void.
      if (self->stops() == stops) {
        if (*r) {  // all threads went, whatever was asked
          self->threadsResumed(tid, true);
          self->programRan();
        } else if (!single) {  // only this one (the backend reports any others it took along)
          self->setRunState(before);
          self->threadsResumed(tid, false);
        }
      }
      respond(body(protocol::ContinueResponseBody{*r}));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeContinueHandler() { return std::make_unique<ContinueHandler>(); }

}  // namespace strata::adapter
