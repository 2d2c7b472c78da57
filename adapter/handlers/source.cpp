// source: the text of code that has no file (exec, -c), by its source reference.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class SourceHandler final : public TypedHandler<protocol::SourceArguments> {
 public:
  std::string_view command() const override { return "source"; }

 protected:
  void run(Session& session, const protocol::SourceArguments& args, Responder respond) override {
    std::int64_t id = args.sourceReference;
    if (args.source && args.source->sourceReference) id = *args.source->sourceReference;
    auto ref = resolveOwnedId(session, session.sources(), id, "sourceReference");
    if (!ref) return respond(ref.takeError());
    ref->owner->source(ref->local, [respond](Result<backends::SourceContent> r) {
      if (!r) return respond(r.takeError());
      respond(body(toProtocol(*r)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeSourceHandler() { return std::make_unique<SourceHandler>(); }

}  // namespace strata::adapter
