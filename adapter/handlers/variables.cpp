// variables: one page of the children of a scope or a structured value.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class VariablesHandler final : public TypedHandler<protocol::VariablesArguments> {
 public:
  std::string_view command() const override { return "variables"; }

 protected:
  void run(Session& session, const protocol::VariablesArguments& args, Responder respond) override {
    auto ref = resolveOwnedId(session, session.variableRefs(), args.variablesReference, "variablesReference");
    if (!ref) return respond(ref.takeError());
    backends::VariablesQuery q;
    q.variablesReference = ref->local;
    q.filter = args.filter.value_or("");
    if (!q.filter.empty() && q.filter != "indexed" && q.filter != "named")
      return respond(Error{errors::kBadArguments,
                           "invalid 'variables' request: arguments.filter: expected 'indexed' or "
                           "'named', got '" + q.filter + "'", false});
    q.start = args.start.value_or(0);
    q.count = args.count.value_or(0);
    if (q.start < 0 || q.count < 0)
      return respond(Error{errors::kBadArguments,
                           "invalid 'variables' request: start and count must not be negative", false});
    auto self = session.shared_from_this();
    auto* owner = ref->owner;
    auto scope = session.idScope(ref->thread);
    owner->variables(q, [self, owner, scope, respond](Result<std::vector<backends::ValueInfo>> r) {
      if (!r) return respond(r.takeError());
      if (!self->current(scope)) return respond(ranAgain("the variables"));
      respond(body(toProtocol(*self, owner, *r, scope)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeVariablesHandler() { return std::make_unique<VariablesHandler>(); }

}  // namespace strata::adapter
