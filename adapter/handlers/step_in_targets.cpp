// stepInTargets: the calls on a frame's line that stepIn (with targetId) can enter.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class StepInTargetsHandler final : public TypedHandler<protocol::StepInTargetsArguments> {
 public:
  std::string_view command() const override { return "stepInTargets"; }

 protected:
  void run(Session& session, const protocol::StepInTargetsArguments& args, Responder respond) override {
    auto frame = resolveOwnedId(session, session.frames(), args.frameId, "frameId");
    if (!frame) return respond(frame.takeError());
    frame->owner->stepInTargets(frame->local, [respond](Result<std::vector<backends::StepInTargetInfo>> r) {
      if (!r) return respond(r.takeError());
      respond(toJson(*r));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeStepInTargetsHandler() { return std::make_unique<StepInTargetsHandler>(); }

}  // namespace strata::adapter
