// JSON bodies of the GPU requests: field names as the spec writes them, times in integer ns.
#include "strata/cuda/store_json.hpp"

#include <boost/json.hpp>

namespace strata::cuda {

namespace json = boost::json;

namespace {

json::object span(const TimeSpan& s) { return json::object{{"startNs", s.startNs}, {"endNs", s.endNs}}; }

json::array triple(const std::int32_t (&v)[3]) { return json::array{v[0], v[1], v[2]}; }

}  // namespace

json::value toJson(const Summary& s) {
  json::array kernels, copies, syncs, devices, streams;
  for (const KernelStat& k : s.kernels) {
    kernels.push_back(json::object{{"name", k.name}, {"count", k.count}, {"totalNs", k.totalNs},
                                   {"avgNs", k.avgNs}, {"minNs", k.minNs}, {"maxNs", k.maxNs}});
  }
  for (const CopyStat& c : s.copies) {
    copies.push_back(json::object{{"kind", c.kind}, {"count", c.count}, {"bytes", c.bytes}, {"totalNs", c.totalNs}});
  }
  for (const SyncStat& c : s.syncs) {
    syncs.push_back(json::object{{"kind", c.kind}, {"count", c.count}, {"totalNs", c.totalNs}});
  }
  for (const DeviceInfo& d : s.devices) {
    json::object o{{"device", d.device}, {"propertiesKnown", d.propertiesKnown}, {"kernels", d.kernels}};
    if (!d.name.empty()) o["name"] = d.name;
    devices.push_back(std::move(o));
  }
  for (const StreamInfo& x : s.streams) {
    streams.push_back(json::object{{"pid", x.pid}, {"device", x.device}, {"stream", x.stream},
                                   {"records", x.records}, {"timeSpan", span(x.timeSpan)}});
  }
  return json::object{{"kernels", std::move(kernels)}, {"copies", std::move(copies)}, {"syncs", std::move(syncs)},
                      {"timeSpan", span(s.timeSpan)}, {"devices", std::move(devices)},
                      {"streams", std::move(streams)}, {"dropped", s.dropped}, {"records", s.records},
                      {"untimed", s.untimed}, {"kernelNames", s.kernelNames}};
}

json::value toJson(const Timeline& t) {
  json::array tracks, items;
  for (const Track& k : t.tracks) {
    json::object o{{"id", k.id}, {"kind", k.kind == TrackKind::Gpu ? "gpu" : "cpu"}, {"pid", k.pid}, {"name", k.name}};
    if (k.kind == TrackKind::Gpu) {
      o["device"] = k.device;
      o["stream"] = k.stream;
    } else {
      o["tid"] = k.tid;
    }
    tracks.push_back(std::move(o));
  }
  for (const TimelineItem& i : t.items) {
    json::object o{{"track", i.track}, {"startNs", i.startNs}, {"endNs", i.endNs}, {"count", i.count},
                   {"kind", recordKindName(i.kind)}, {"name", i.name}, {"id", i.id}};
    if (i.count > 1) o["busyNs"] = i.busyNs;
    items.push_back(std::move(o));
  }
  json::object o{{"window", span(t.window)}, {"maxItems", t.maxItems}, {"merged", t.level >= 0},
                 {"tracks", std::move(tracks)}, {"items", std::move(items)}};
  if (t.level >= 0) {
    o["level"] = t.level;
    o["bucketNs"] = t.bucketNs;
  }
  if (t.tracksOmitted) o["tracksOmitted"] = t.tracksOmitted;
  return o;
}

json::value toJson(const DeviceProperties& p) {
  return json::object{{"device", p.device}, {"name", p.name}, {"computeMajor", p.computeMajor},
                      {"computeMinor", p.computeMinor}, {"smCount", p.smCount},
                      {"maxThreadsPerBlock", p.maxThreadsPerBlock},
                      {"maxThreadsPerMultiprocessor", p.maxThreadsPerMultiprocessor},
                      {"maxBlocksPerMultiprocessor", p.maxBlocksPerMultiprocessor},
                      {"regsPerBlock", p.regsPerBlock}, {"regsPerMultiprocessor", p.regsPerMultiprocessor},
                      {"warpSize", p.warpSize}, {"sharedMemPerBlock", p.sharedMemPerBlock},
                      {"sharedMemPerMultiprocessor", p.sharedMemPerMultiprocessor},
                      {"sharedMemPerBlockOptin", p.sharedMemPerBlockOptin},
                      {"reservedSharedMemPerBlock", p.reservedSharedMemPerBlock},
                      {"totalGlobalMem", p.totalGlobalMem}, {"source", p.source}};
}

json::value toJson(const Occupancy& o) {
  json::array limited;
  for (auto& l : o.limitedBy) limited.push_back(json::string(l));
  return json::object{{"occupancy", o.occupancy}, {"activeBlocksPerSm", o.activeBlocksPerSm},
                      {"activeWarpsPerSm", o.activeWarpsPerSm}, {"maxWarpsPerSm", o.maxWarpsPerSm},
                      {"limitedBy", std::move(limited)}, {"blockLimitWarps", o.blockLimitWarps},
                      {"blockLimitRegisters", o.blockLimitRegisters},
                      {"blockLimitSharedMemory", o.blockLimitSharedMemory}, {"blockLimitBlocks", o.blockLimitBlocks}};
}

namespace {

json::array pythonFrames(const std::vector<PythonFrame>& frames) {
  json::array py;
  for (const PythonFrame& f : frames) py.push_back(json::object{{"function", f.function}, {"file", f.file}, {"line", f.line}});
  return py;
}

json::array nativeStack(const std::vector<NativeFrame>& frames) {
  json::array out;
  for (const NativeFrame& f : frames) {
    json::object n{{"address", f.pc}, {"function", f.function}};
    if (!f.file.empty()) {
      n["file"] = f.file;
      n["line"] = f.line;
    }
    if (!f.module.empty()) n["module"] = f.module;
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

json::value toJson(const RecordDetail& d) {
  const GpuRecord& r = d.record;
  json::object o{{"id", d.id}, {"kind", recordKindName(r.kind)}, {"name", d.name}, {"pid", r.pid},
                 {"startNs", r.start}, {"endNs", r.end}, {"durationNs", d.durationNs},
                 {"correlation", r.correlation}};
  if (d.mangledName != d.name) o["mangledName"] = d.mangledName;
  if (r.tid) o["tid"] = r.tid;
  if (r.kind != RecordKind::RuntimeApi && r.kind != RecordKind::DriverApi && r.kind != RecordKind::CpuOp) {
    o["device"] = r.device;
    o["context"] = r.context;
    o["stream"] = r.stream;
  }
  if (r.externalId) o["externalId"] = r.externalId;
  if (r.kind == RecordKind::Kernel) {
    o["grid"] = triple(r.grid);
    o["block"] = triple(r.block);
    o["registersPerThread"] = r.registersPerThread;
    o["staticSharedMemory"] = r.staticSharedMemory;
    o["dynamicSharedMemory"] = r.dynamicSharedMemory;
    if (r.graphId) o["graphId"] = r.graphId;
    if (r.graphNodeId) o["graphNodeId"] = r.graphNodeId;
    if (d.occupancy) o["occupancy"] = toJson(*d.occupancy);
    else o["occupancyUnavailable"] = d.occupancyNote;
    if (d.metrics && d.metrics->error.empty()) {
      json::object m;
      auto put = [&](const char* key, const std::optional<double>& v) {
        if (v) m[key] = *v;
      };
      put("smThroughputPct", d.metrics->smThroughputPct);
      put("dramThroughputPct", d.metrics->dramThroughputPct);
      put("achievedOccupancyPct", d.metrics->achievedOccupancyPct);
      put("durationNs", d.metrics->durationNs);
      m["passes"] = d.metrics->passes;
      o["metrics"] = std::move(m);
    } else if (d.metrics) {
      o["metricsError"] = d.metrics->error;
    }
  }
  if (r.kind == RecordKind::Memcpy) {
    o["copyKind"] = copyKindName(r.copyKind);
    o["bytes"] = r.bytes;
  }
  if (r.kind == RecordKind::Memset) o["bytes"] = r.bytes;
  if (r.kind == RecordKind::Synchronization) o["syncKind"] = syncKindName(r.copyKind);
  if (r.kind == RecordKind::RuntimeApi || r.kind == RecordKind::DriverApi) o["result"] = r.result;
  if (d.device) o["deviceProperties"] = toJson(*d.device);
  o["site"] = r.site;
  o["siteKnown"] = d.siteKnown;
  o["pythonFrames"] = pythonFrames(d.python);
  json::array native;
  for (std::uint64_t a : d.native) native.push_back(a);
  o["nativeFrames"] = std::move(native);
  o["nativeStack"] = nativeStack(d.nativeFrames);
  // How the Python frames relate to the record: the launching thread's own, the thread that
  // waited for a thread with none (backward's kernels), or where a graph replay's node was captured.
  if (d.capture) o["attribution"] = "capture";
  else if (auto a = siteAttributionName(d.attribution); !a.empty()) o["attribution"] = a;
  if (d.callerTid) {
    o["waitingThread"] = d.callerTid;
    o["waitedIn"] = d.waitedIn;
  }
  if (d.capture) {
    const GraphCapture& c = *d.capture;
    json::object capture{{"node", c.node},
                         {"origin", c.origin},
                         {"site", c.site.site},
                         {"pythonFrames", pythonFrames(c.site.python)},
                         {"nativeStack", nativeStack(c.site.nativeFrames)}};
    if (auto a = siteAttributionName(c.site.attribution); !a.empty()) capture["attribution"] = a;
    o["capture"] = std::move(capture);
  }
  auto related = [](const RelatedRecord& x) {
    return json::object{{"id", x.id}, {"kind", recordKindName(x.kind)}, {"name", x.name}, {"pid", x.pid},
                        {"tid", x.tid}, {"startNs", x.startNs}, {"endNs", x.endNs}};
  };
  if (d.launch) o["launch"] = related(*d.launch);
  if (d.op) o["op"] = related(*d.op);
  if (d.backwardOf) {
    const BackwardOf& b = *d.backwardOf;
    o["backwardOf"] = json::object{{"backwardOp", related(b.backward)},
                                   {"forwardOp", related(b.forward)},
                                   {"sequenceNumber", b.sequenceNumber},
                                   {"pythonFrames", pythonFrames(b.python)}};
  }
  return o;
}

json::value toJson(const ExportReport& r) {
  return json::object{{"events", r.events}, {"skippedUntimed", r.skippedUntimed}, {"bytes", r.bytes},
                      {"extraLanes", r.extraLanes}};
}

json::value toJson(const SqlResult& r) {
  json::array columns, rows;
  for (auto& c : r.columns) columns.push_back(json::string(c));
  for (auto& row : r.rows) {
    json::array a;
    for (auto& v : row) {
      std::visit([&](auto&& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) a.push_back(nullptr);
        else a.push_back(json::value(x));
      }, v);
    }
    rows.push_back(std::move(a));
  }
  return json::object{{"columns", std::move(columns)}, {"rows", std::move(rows)}, {"truncated", r.truncated}};
}

// The gpuActivity event's shape: {counts, timeSpan, dropped}.
json::value toJson(const ActivityCounts& c) {
  return json::object{{"counts", json::object{{"records", c.records}, {"kernels", c.kernels}, {"copies", c.copies}}},
                      {"timeSpan", span(c.timeSpan)}, {"dropped", c.dropped}};
}

json::value toJson(const ImportReport& r) {
  json::object skipped;
  for (auto& [k, v] : r.skipped) skipped[k] = v;
  return json::object{{"format", traceFormatName(r.format)}, {"events", r.events}, {"records", r.records},
                      {"devices", r.devices}, {"skipped", std::move(skipped)}};
}

}  // namespace strata::cuda
