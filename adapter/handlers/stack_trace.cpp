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
    std::uint64_t since = session.resumes();
    owner->stackTrace(args.threadId, start, levels, [self, owner, since, respond](Result<backends::StackPage> r) {
      if (!r) return respond(r.takeError());
      if (self->resumes() != since) return respond(ranAgain("the stack trace"));
      respond(body(toProtocol(*self, owner, *r)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeStackTraceHandler() { return std::make_unique<StackTraceHandler>(); }

}  // namespace strata::adapter
