// setExpression: assigns a value to an assignable expression (a watch such as `x[3]`).
#include "adapter/handlers/set_value.hpp"

namespace strata::adapter {
namespace {

class SetExpressionHandler final : public TypedHandler<protocol::SetExpressionArguments> {
 public:
  std::string_view command() const override { return "setExpression"; }

 protected:
  void run(Session& session, const protocol::SetExpressionArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    backends::Backend* owner = *backend;
    std::optional<std::int64_t> frameId;
    std::int64_t thread = 0;
    if (args.frameId) {
      auto frame = resolveId(session.frames(), *args.frameId, "frameId");
      if (!frame) return respond(frame.takeError());
      owner = frame->owner;
      frameId = frame->local;
      thread = frame->thread;
    }
    owner->setExpression(args.expression, args.value, frameId,
                         setValueReply(session, owner, thread, std::move(respond)));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetExpressionHandler() { return std::make_unique<SetExpressionHandler>(); }

}  // namespace strata::adapter
