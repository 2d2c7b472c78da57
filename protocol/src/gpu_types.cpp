// Field lists of the GPU requests' arguments (gpu_types.hpp); one list drives both directions.
#include "strata/protocol/gpu_types.hpp"

#include "codec.hpp"

namespace strata::protocol {

STRATA_CODEC(GpuSummaryArguments,
  v.field("limit", t.limit, false);)

STRATA_CODEC(GpuTimelineArguments,
  v.field("startNs", t.startNs, false);
  v.field("endNs", t.endNs, false);
  v.field("maxItems", t.maxItems, false);)

STRATA_CODEC(GpuKernelArguments,
  v.field("id", t.id, true);)

STRATA_CODEC(GpuExportArguments,
  v.field("format", t.format, false);
  v.field("path", t.path, false);
  v.field("startNs", t.startNs, false);
  v.field("endNs", t.endNs, false);)

STRATA_CODEC(GpuStartArguments,
  v.field("mode", t.mode, false);)

STRATA_CODEC(GpuProfileArguments,
  v.field("kernel", t.kernel, true);
  v.field("count", t.count, false);)

STRATA_CODEC(GpuStopArguments,
  (void)v;
  (void)t;)

}  // namespace strata::protocol
