// modules: every object loaded in the debuggee (executable, dynamic linker, libraries).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class ModulesHandler final : public TypedHandler<protocol::ModulesArguments> {
 public:
  std::string_view command() const override { return "modules"; }

 protected:
  void run(Session& session, const protocol::ModulesArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    std::int64_t start = std::max<std::int64_t>(0, args.startModule.value_or(0));
    std::int64_t count = std::max<std::int64_t>(0, args.moduleCount.value_or(0));
    (*backend)->modules([respond, start, count](Result<std::vector<backends::ModuleInfo>> r) {
      if (!r) return respond(r.takeError());
      json::array list;
      auto total = static_cast<std::int64_t>(r->size());
      // Compared, not added: a client may send both near INT64_MAX.
      std::int64_t end = count > 0 && count < total - start ? start + count : total;
      for (std::int64_t i = start; i < end; ++i) {
        list.push_back(toJson((*r)[static_cast<std::size_t>(i)]));
      }
      respond(json::value(json::object{{"modules", std::move(list)}, {"totalModules", total}}));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeModulesHandler() { return std::make_unique<ModulesHandler>(); }

}  // namespace strata::adapter
