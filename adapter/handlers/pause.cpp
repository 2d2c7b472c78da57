// pause: asks a running thread (and with it the program) to stop; a `stopped` event follows.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class PauseHandler final : public TypedHandler<protocol::PauseArguments> {
 public:
  std::string_view command() const override { return "pause"; }

 protected:
  void run(Session& session, const protocol::PauseArguments& args, Responder respond) override {
    auto backend = threadBackend(session, args.threadId);
    if (!backend) return respond(backend.takeError());
    // Asked to stop, the threads count as stopping: a stack requested meanwhile shows what
    // the backend can see (a thread asleep in C shows its live stack until it wakes and stops).
    auto before = session.runState();
    session.setRunState({});
    auto self = session.shared_from_this();
    (*backend)->pause(args.threadId, [self, before, respond](Result<void> r) {
      if (!r) {
        self->setRunState(before);
        return respond(r.takeError());
      }
      respond(json::value(nullptr));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makePauseHandler() { return std::make_unique<PauseHandler>(); }

}  // namespace strata::adapter
