// gpuTimeline: the items of a time window per track (device stream, CPU thread), never more
// than maxItems: where the window holds more, neighbours merge into one item with a count.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

constexpr std::int64_t kDefaultItems = 2000;
constexpr std::int64_t kMaxItems = 100000;

class GpuTimelineHandler final : public TypedHandler<protocol::GpuTimelineArguments> {
 public:
  std::string_view command() const override { return "gpuTimeline"; }

 protected:
  void run(Session& session, const protocol::GpuTimelineArguments& args, Responder respond) override {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    auto bad = [&](const std::string& text) {
      respond(Error{errors::kBadArguments, "invalid 'gpuTimeline' request: " + text, false});
    };
    auto items = countArgument(command(), "maxItems", args.maxItems, kDefaultItems, kMaxItems);
    if (!items) return respond(items.takeError());
    backends::GpuTimelineQuery q;
    q.maxItems = static_cast<std::uint32_t>(*items);
    if (args.startNs && *args.startNs < 0) return bad("arguments.startNs: a time is not negative");
    if (args.endNs && *args.endNs < 0) return bad("arguments.endNs: a time is not negative");
    if (args.startNs && args.endNs && *args.endNs <= *args.startNs)
      return bad("arguments.endNs (" + std::to_string(*args.endNs) + ") must be after arguments.startNs (" +
                 std::to_string(*args.startNs) + ")");
    if (args.startNs) q.startNs = static_cast<std::uint64_t>(*args.startNs);
    if (args.endNs) q.endNs = static_cast<std::uint64_t>(*args.endNs);
    (*gpu)->timeline(q, [respond](Result<json::value> r) { respond(std::move(r)); });
  }
};

}  // namespace

std::unique_ptr<Handler> makeGpuTimelineHandler() { return std::make_unique<GpuTimelineHandler>(); }

}  // namespace strata::adapter
