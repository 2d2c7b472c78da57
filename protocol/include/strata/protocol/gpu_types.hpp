// Typed arguments of Strata's custom GPU requests (DESIGN: "Custom DAP surface"). Their
// response bodies and the gpuActivity event are JSON built by the GPU backend; each custom
// message has a JSON schema in tests/e2e/schema/strataCustom.json. Times are integer ns.
#pragma once

#include "strata/protocol/types.hpp"

namespace strata::protocol {

// gpuSummary: the top `limit` kernels by total time (default 20).
struct GpuSummaryArguments {
  std::optional<std::int64_t> limit;
};
// gpuTimeline: items overlapping [startNs, endNs) (default: the whole span), at most maxItems.
struct GpuTimelineArguments {
  std::optional<std::int64_t> startNs, endNs;
  std::optional<std::int64_t> maxItems;
};
// gpuKernel: one record by the id gpuTimeline or `!gpu` gave.
struct GpuKernelArguments {
  std::int64_t id = 0;
};
// gpuExport: a file ui.perfetto.dev opens; without `path`, one beside the session's store.
struct GpuExportArguments {
  std::optional<std::string> format;  // chrome | perfetto (default chrome)
  std::optional<std::string> path;
  std::optional<std::int64_t> startNs, endNs;
};
// gpuStart/gpuStop: live collection during a session.
struct GpuStartArguments {
  std::optional<std::string> mode;  // trace | stacks (default trace)
};
struct GpuStopArguments {};
// gpuProfile: hardware metrics of the next `count` launches (1..64, default 1) of kernels whose
// names contain `kernel`.
struct GpuProfileArguments {
  std::string kernel;
  std::optional<std::int64_t> count;
};

#define STRATA_GPU_STRUCT(T)                                                       \
  void tag_invoke(const json::value_from_tag&, json::value& jv, const T& v);       \
  void tag_invoke(decode_tag, Reader& r, T& v);

STRATA_GPU_STRUCT(GpuSummaryArguments)
STRATA_GPU_STRUCT(GpuTimelineArguments)
STRATA_GPU_STRUCT(GpuKernelArguments)
STRATA_GPU_STRUCT(GpuExportArguments)
STRATA_GPU_STRUCT(GpuStartArguments)
STRATA_GPU_STRUCT(GpuStopArguments)
STRATA_GPU_STRUCT(GpuProfileArguments)

#undef STRATA_GPU_STRUCT

}  // namespace strata::protocol
