// stackTrace: one page of a stopped thread's frames, with the total when the backend knows it.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class StackTraceHandler final : public TypedHandler<protocol::StackTraceArguments> {
 public:
  std::string_view command() const override { return "stackTrace"; }

 protected:
  void run(Session& session, const protocol::StackTraceArguments& args, Responder respond) override {
    auto backend = threadBackend(session, args.threadId);
    if (!backend) return respond(backend.takeError());
    if (auto running = session.requireStopped(args.threadId, "stackTrace")) return respond(std::move(*running));
    std::int64_t start = args.startFrame.value_or(0), levels = args.levels.value_or(0);
    if (start < 0 || levels < 0)
      return respond(Error{errors::kBadArguments,
                           "invalid 'stackTrace' request: startFrame and levels must not be negative",
                           false});
    backends::Backend* owner = *backend;
    auto self = session.shared_from_this();
    auto scope = session.idScope(args.threadId);
    owner->stackTrace(args.threadId, start, levels, [self, owner, scope, respond](Result<backends::StackPage> r) {
      if (!r) return respond(r.takeError());
      if (!self->current(scope)) return respond(ranAgain("the stack trace"));
      respond(body(toProtocol(*self, owner, *r, scope)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeStackTraceHandler() { return std::make_unique<StackTraceHandler>(); }

}  // namespace strata::adapter
