// setVariable: assigns a new value to a variable shown under a variables reference.
#include "adapter/handlers/set_value.hpp"

namespace strata::adapter {
namespace {

class SetVariableHandler final : public TypedHandler<protocol::SetVariableArguments> {
 public:
  std::string_view command() const override { return "setVariable"; }

 protected:
  void run(Session& session, const protocol::SetVariableArguments& args, Responder respond) override {
    auto ref = resolveOwnedId(session, session.variableRefs(), args.variablesReference, "variablesReference");
    if (!ref) return respond(ref.takeError());
    ref->owner->setVariable(ref->local, args.name, args.value,
                            setValueReply(session, ref->owner, ref->thread, std::move(respond)));
  }
};

}  // namespace

std::unique_ptr<Handler> makeSetVariableHandler() { return std::make_unique<SetVariableHandler>(); }

}  // namespace strata::adapter
