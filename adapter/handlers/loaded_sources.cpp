// loadedSources: the source files of the code loaded in the debuggee.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class LoadedSourcesHandler final : public Handler {
 public:
  std::string_view command() const override { return "loadedSources"; }
  void handle(Session& session, const protocol::Request&, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    auto self = session.shared_from_this();
    backends::Backend* owner = *backend;
    owner->loadedSources([self, owner, respond](Result<std::vector<backends::SourceInfo>> r) {
      if (!r) return respond(r.takeError());
      json::array list;
      for (const auto& s : *r) list.push_back(json::value_from(toProtocol(*self, owner, s)));
      respond(json::value(json::object{{"sources", std::move(list)}}));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeLoadedSourcesHandler() { return std::make_unique<LoadedSourcesHandler>(); }

}  // namespace strata::adapter
