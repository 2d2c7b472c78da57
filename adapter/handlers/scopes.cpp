// scopes: the variable groups (locals, globals, ...) of one frame.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class ScopesHandler final : public TypedHandler<protocol::ScopesArguments> {
 public:
  std::string_view command() const override { return "scopes"; }

 protected:
  void run(Session& session, const protocol::ScopesArguments& args, Responder respond) override {
    auto frame = resolveOwnedId(session, session.frames(), args.frameId, "frameId");
    if (!frame) return respond(frame.takeError());
    auto self = session.shared_from_this();
    auto* owner = frame->owner;
    auto scope = session.idScope(frame->thread);
    owner->scopes(frame->local, [self, owner, scope, respond](Result<std::vector<backends::ScopeInfo>> r) {
      if (!r) return respond(r.takeError());
      if (!self->current(scope)) return respond(ranAgain("the scopes"));
      respond(body(toProtocol(*self, owner, *r, scope)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeScopesHandler() { return std::make_unique<ScopesHandler>(); }

}  // namespace strata::adapter
