// gpuSummary from the statistics kept during ingestion (no pass over the records), and the
// names of CUPTI's enumerations.
#include <algorithm>

#include "store_impl.hpp"

namespace strata::cuda {

std::string_view copyKindName(std::uint8_t k) {
  static constexpr std::string_view names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                               "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return k < std::size(names) ? names[k] : "unknown";
}

std::string_view syncKindName(std::uint8_t k) {
  // CUpti_ActivitySynchronizationType
  static constexpr std::string_view names[] = {"unknown", "event", "stream wait event", "stream",
                                               "context"};
  return k < std::size(names) ? names[k] : "unknown";
}

Result<Summary> Store::summary(std::size_t limit) {
  if (auto r = flush(); !r) return r.takeError();
  Impl& m = *impl_;
  Summary s;
  std::vector<std::uint32_t> ids;
  for (std::uint32_t id = 0; id < m.kernelStats.size(); ++id) {
    if (m.kernelStats[id].count) ids.push_back(id);
  }
  s.kernelNames = ids.size();
  auto byTotal = [&](std::uint32_t a, std::uint32_t b) {
    const Agg &x = m.kernelStats[a], &y = m.kernelStats[b];
    return x.total != y.total ? x.total > y.total : x.count != y.count ? x.count > y.count : a < b;
  };
  std::size_t n = std::min(limit, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), byTotal);
  for (std::size_t i = 0; i < n; ++i) {
    const Agg& a = m.kernelStats[ids[i]];
    s.kernels.push_back(KernelStat{.name = m.nameText(ids[i]), .count = a.count, .totalNs = a.total,
                                   .avgNs = a.timed ? a.total / a.timed : 0, .minNs = a.min, .maxNs = a.max});
  }
  for (auto& [key, c] : m.copyStats) {
    if (!c.count) continue;
    std::string kind = key.first == static_cast<std::uint8_t>(RecordKind::Memset) ? "memset" : std::string(copyKindName(key.second));
    s.copies.push_back(CopyStat{.kind = kind, .count = c.count, .bytes = c.bytes, .totalNs = c.total});
  }
  std::sort(s.copies.begin(), s.copies.end(), [](auto& a, auto& b) { return a.totalNs > b.totalNs; });
  for (auto& [kind, c] : m.syncStats) {
    if (c.count) s.syncs.push_back(SyncStat{.kind = std::string(syncKindName(kind)), .count = c.count, .totalNs = c.total});
  }
  std::sort(s.syncs.begin(), s.syncs.end(), [](auto& a, auto& b) { return a.totalNs > b.totalNs; });
  ActivityCounts counts = this->counts();
  s.timeSpan = counts.timeSpan;
  s.dropped = m.dropped;
  s.records = m.records;
  s.untimed = m.untimed;
  std::map<std::uint32_t, DeviceInfo> devices;
  for (auto& [id, p] : m.devices) devices[id] = DeviceInfo{.device = id, .name = p.name, .propertiesKnown = true};
  for (const TrackState& t : m.tracks) {
    if (t.info.kind != TrackKind::Gpu) continue;
    DeviceInfo& d = devices[t.info.device];
    d.device = t.info.device;
    d.kernels += t.kernels;
    s.streams.push_back(StreamInfo{.pid = t.info.pid, .device = t.info.device, .stream = t.info.stream,
                                   .records = t.records, .timeSpan = {t.start, t.end}});
  }
  for (auto& [id, d] : devices) s.devices.push_back(d);
  return s;
}

}  // namespace strata::cuda
