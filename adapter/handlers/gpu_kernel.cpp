// gpuKernel: one record in full (a kernel's grid, block, registers, shared memory, stream,
// times, estimated occupancy) with the Python and native frames that launched it as DAP
// StackFrames, their ids the GPU backend's (scopes on one answers from there).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class GpuKernelHandler final : public TypedHandler<protocol::GpuKernelArguments> {
 public:
  std::string_view command() const override { return "gpuKernel"; }

 protected:
  void run(Session& session, const protocol::GpuKernelArguments& args, Responder respond) override {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    if (args.id < 0)
      return respond(Error{errors::kBadArguments, "invalid 'gpuKernel' request: arguments.id: an id is not negative",
                           false});
    auto self = session.shared_from_this();
    auto* owner = session.gpuBackend();
    (*gpu)->kernel(static_cast<std::uint64_t>(args.id), [self, owner, respond](Result<backends::GpuRecordDetail> r) {
      if (!r) return respond(r.takeError());
      backends::StackPage page;
      page.frames = std::move(r->frames);
      auto frames = toProtocol(*self, owner, page, self->idScope(0)).stackFrames;
      json::object out = std::move(r->body);
      out["stackFrames"] = json::value_from(frames);
      respond(json::value(std::move(out)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeGpuKernelHandler() { return std::make_unique<GpuKernelHandler>(); }

}  // namespace strata::adapter
