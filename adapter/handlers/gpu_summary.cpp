// gpuSummary: the top kernels by total time, copies by kind, syncs, the time span, devices,
// streams and dropped records of the session's GPU data.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

constexpr std::int64_t kDefaultLimit = 20;
constexpr std::int64_t kMaxLimit = 10000;

class GpuSummaryHandler final : public TypedHandler<protocol::GpuSummaryArguments> {
 public:
  std::string_view command() const override { return "gpuSummary"; }

 protected:
  void run(Session& session, const protocol::GpuSummaryArguments& args, Responder respond) override {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    auto limit = countArgument(command(), "limit", args.limit, kDefaultLimit, kMaxLimit);
    if (!limit) return respond(limit.takeError());
    (*gpu)->summary(static_cast<std::size_t>(*limit), [respond](Result<json::value> r) { respond(std::move(r)); });
  }
};

}  // namespace

std::unique_ptr<Handler> makeGpuSummaryHandler() { return std::make_unique<GpuSummaryHandler>(); }

}  // namespace strata::adapter
