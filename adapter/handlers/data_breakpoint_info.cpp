// dataBreakpointInfo: whether a variable (variablesReference + name) or an expression can be
// watched, and the id setDataBreakpoints takes for it.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class DataBreakpointInfoHandler final : public TypedHandler<protocol::DataBreakpointInfoArguments> {
 public:
  std::string_view command() const override { return "dataBreakpointInfo"; }

 protected:
  void run(Session& session, const protocol::DataBreakpointInfoArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    backends::DataBreakpointQuery q;
    q.name = args.name;
    q.asAddress = args.asAddress.value_or(false);
    q.bytes = args.bytes;
    backends::Backend* owner = *backend;
    if (args.variablesReference && *args.variablesReference > 0) {
      auto ref = resolveId(session.variableRefs(), *args.variablesReference, "variablesReference");
      if (!ref) return respond(ref.takeError());
      q.variablesReference = ref->local;
      owner = ref->owner;
    } else if (args.frameId) {
      auto frame = resolveId(session.frames(), *args.frameId, "frameId");
      if (!frame) return respond(frame.takeError());
      q.frameId = frame->local;
      owner = frame->owner;
    }
    owner->dataBreakpointInfo(q, [respond](Result<backends::DataBreakpointTarget> r) {
      if (!r) return respond(r.takeError());
      respond(toJson(*r));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeDataBreakpointInfoHandler() { return std::make_unique<DataBreakpointInfoHandler>(); }

}  // namespace strata::adapter
