// gpuProfile: hardware metrics (SM and DRAM throughput, achieved occupancy, GPU time) of the next
// N launches of a kernel, through the live collection the GPU backend has; without one, an
// error says it is not available.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class GpuProfileHandler final : public TypedHandler<protocol::GpuProfileArguments> {
 public:
  std::string_view command() const override { return "gpuProfile"; }

 protected:
  void run(Session& session, const protocol::GpuProfileArguments& args, Responder respond) override {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    const std::int64_t count = args.count.value_or(1);
    if (count < 1 || count > 64)
      return respond(Error{errors::kBadArguments,
                           "invalid 'gpuProfile' request: arguments.count: expected 1 to 64 launches, got " +
                               std::to_string(count),
                           false});
    if (args.kernel.empty() || args.kernel.size() > 255 || args.kernel.find_first_of(" \t\n;") != std::string::npos)
      return respond(Error{errors::kBadArguments,
                           "invalid 'gpuProfile' request: arguments.kernel: expected a kernel's name or part of one "
                           "(1 to 255 bytes, no spaces or ';'), got '" + args.kernel + "'",
                           false});
    (*gpu)->profile(args.kernel, static_cast<std::uint32_t>(count), [respond](Result<json::value> r) {
      if (!r) return respond(r.takeError());
      respond(std::move(*r));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeGpuProfileHandler() { return std::make_unique<GpuProfileHandler>(); }

}  // namespace strata::adapter
