// gpuStart: starts collecting GPU activity in the running program (late mode), through the
// live collection the GPU backend has; without one, an error says it is not available.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class GpuStartHandler final : public TypedHandler<protocol::GpuStartArguments> {
 public:
  std::string_view command() const override { return "gpuStart"; }

 protected:
  void run(Session& session, const protocol::GpuStartArguments& args, Responder respond) override {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    std::string mode = args.mode.value_or("trace");
    if (mode != "trace" && mode != "stacks")
      return respond(Error{errors::kBadArguments,
                           "invalid 'gpuStart' request: arguments.mode: expected 'trace' or 'stacks', got '" + mode + "'",
                           false});
    (*gpu)->start(mode, [respond](Result<void> r) {
      if (!r) return respond(r.takeError());
      respond(json::value(nullptr));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeGpuStartHandler() { return std::make_unique<GpuStartHandler>(); }

}  // namespace strata::adapter
