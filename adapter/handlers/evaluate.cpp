// evaluate: an expression (or, in the REPL, a statement) in a frame's context; a REPL line
// starting with '!' is a Debug Console command (adapter/console.hpp) instead.
#include "adapter/console.hpp"
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class EvaluateHandler final : public TypedHandler<protocol::EvaluateArguments> {
 public:
  std::string_view command() const override { return "evaluate"; }

 protected:
  void run(Session& session, const protocol::EvaluateArguments& args, Responder respond) override {
    if (isConsoleCommand(args)) {
      return runConsoleCommand(session, args.expression, [respond](Result<std::string> r) {
        if (!r) return respond(r.takeError());
        protocol::EvaluateResponseBody out;
        out.result = std::move(*r);
        respond(body(out));
      });
    }
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    backends::EvaluateQuery q;
    q.expression = args.expression;
    q.context = args.context.value_or("repl");
    backends::Backend* owner = *backend;
    std::int64_t thread = 0;  // the values of an evaluate without a frame belong to no thread
    if (args.frameId) {
      auto frame = resolveId(session.frames(), *args.frameId, "frameId");
      if (!frame) return respond(frame.takeError());
      q.frameId = frame->local;
      owner = frame->owner;
      thread = frame->thread;
    }
    auto self = session.shared_from_this();
    auto scope = session.idScope(thread);
    owner->evaluate(q, [self, owner, scope, respond](Result<backends::ValueInfo> r) {
      if (!r) return respond(r.takeError());
      respond(body(toEvaluateBody(*self, owner, *r, scope)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeEvaluateHandler() { return std::make_unique<EvaluateHandler>(); }

}  // namespace strata::adapter
