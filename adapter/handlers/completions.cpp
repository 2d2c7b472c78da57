// completions: names the debug console can offer for what the user is typing.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class CompletionsHandler final : public TypedHandler<protocol::CompletionsArguments> {
 public:
  std::string_view command() const override { return "completions"; }

 protected:
  void run(Session& session, const protocol::CompletionsArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    backends::CompletionsQuery q;
    q.text = args.text;
    q.column = args.column;
    q.line = args.line.value_or(1);
    backends::Backend* owner = *backend;
    if (args.frameId) {
      auto frame = resolveId(session.frames(), *args.frameId, "frameId");
      if (!frame) return respond(frame.takeError());
      owner = frame->owner;
      q.frameId = frame->local;
    }
    owner->completions(q, [respond](Result<std::vector<backends::CompletionEntry>> r) {
      if (!r) return respond(r.takeError());
      respond(body(toProtocol(*r)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeCompletionsHandler() { return std::make_unique<CompletionsHandler>(); }

}  // namespace strata::adapter
