// The store's query results as the JSON bodies of the custom DAP requests (gpuSummary,
// gpuTimeline, gpuKernel, gpuExport, gpuActivity) and of `strata gpu ... --json`.
#pragma once

#include <boost/json/value.hpp>

#include "strata/cuda/import.hpp"
#include "strata/cuda/store.hpp"

namespace strata::cuda {

boost::json::value toJson(const Summary& s);
boost::json::value toJson(const Timeline& t);
// Frames as they are stored; turning them into DAP StackFrames with sources is the adapter's.
boost::json::value toJson(const RecordDetail& d);
boost::json::value toJson(const ExportReport& r);
boost::json::value toJson(const SqlResult& r);
boost::json::value toJson(const ActivityCounts& c);
boost::json::value toJson(const ImportReport& r);
boost::json::value toJson(const DeviceProperties& p);
boost::json::value toJson(const Occupancy& o);

}  // namespace strata::cuda
