// gpuStop: stops collecting GPU activity (what was collected stays in the session's store).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class GpuStopHandler final : public TypedHandler<protocol::GpuStopArguments> {
 public:
  std::string_view command() const override { return "gpuStop"; }

 protected:
  void run(Session& session, const protocol::GpuStopArguments&, Responder respond) override {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    (*gpu)->stop([respond](Result<void> r) {
      if (!r) return respond(r.takeError());
      respond(json::value(nullptr));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeGpuStopHandler() { return std::make_unique<GpuStopHandler>(); }

}  // namespace strata::adapter
