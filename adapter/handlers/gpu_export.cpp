// gpuExport: the session's GPU data as a file ui.perfetto.dev opens (Chrome trace-event JSON,
// or Perfetto's protobuf), optionally only a time window.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class GpuExportHandler final : public TypedHandler<protocol::GpuExportArguments> {
 public:
  std::string_view command() const override { return "gpuExport"; }

 protected:
  void run(Session& session, const protocol::GpuExportArguments& args, Responder respond) override {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    auto bad = [&](const std::string& text) {
      respond(Error{errors::kBadArguments, "invalid 'gpuExport' request: " + text, false});
    };
    backends::GpuExportQuery q;
    q.format = args.format.value_or("chrome");
    if (q.format != "chrome" && q.format != "perfetto")
      return bad("arguments.format: expected 'chrome' or 'perfetto', got '" + q.format + "'");
    if (args.path && args.path->empty()) return bad("arguments.path: the path is empty");
    if (args.path && (*args.path)[0] != '/') return bad("arguments.path: '" + *args.path + "' is not an absolute path");
    q.path = args.path.value_or("");
    if ((args.startNs && *args.startNs < 0) || (args.endNs && *args.endNs < 0)) return bad("a time is not negative");
    if (args.startNs && args.endNs && *args.endNs <= *args.startNs) return bad("arguments.endNs must be after arguments.startNs");
    if (args.startNs) q.startNs = static_cast<std::uint64_t>(*args.startNs);
    if (args.endNs) q.endNs = static_cast<std::uint64_t>(*args.endNs);
    (*gpu)->exportTrace(q, [respond](Result<json::value> r) { respond(std::move(r)); });
  }
};

}  // namespace

std::unique_ptr<Handler> makeGpuExportHandler() { return std::make_unique<GpuExportHandler>(); }

}  // namespace strata::adapter
