// Parsed activity and launch sites to ring messages (see publisher.hpp).
#include "publisher.hpp"

#include <algorithm>
#include <cstring>

namespace strata::cuda::collector {

using ring::MessageType;

namespace {
constexpr std::size_t kExternalSlots = 1 << 16;
constexpr std::size_t kMaxOpenMarkers = 1 << 16;
constexpr std::size_t kMaxPendingNames = 1 << 16;
// Longer names (deep C++ templates) are cut: the ring's messages are bounded.
constexpr std::size_t kMaxString = 16 * 1024;
}  // namespace

// ---- LaunchJoin -------------------------------------------------------------------------

LaunchJoin::LaunchJoin(std::size_t slots) : slots_(new std::atomic<std::uint64_t>[slots]), mask_(slots - 1) {
  for (std::size_t i = 0; i < slots; ++i) slots_[i].store(0, std::memory_order_relaxed);
}

void LaunchJoin::set(std::uint32_t correlation, std::uint32_t site) {
  slots_[correlation & mask_].store((std::uint64_t{correlation} << 32) | site, std::memory_order_release);
}

std::uint32_t LaunchJoin::get(std::uint32_t correlation) const {
  const std::uint64_t v = slots_[correlation & mask_].load(std::memory_order_acquire);
  return (v >> 32) == correlation ? static_cast<std::uint32_t>(v) : 0;
}

// ---- StringTable ------------------------------------------------------------------------

std::pair<std::uint32_t, bool> StringTable::intern(std::string_view text) {
  if (auto it = ids_.find(text); it != ids_.end()) return {it->second, false};
  texts_.emplace_back(text);
  const auto id = static_cast<std::uint32_t>(texts_.size());
  ids_.emplace(texts_.back(), id);
  return {id, true};
}

std::string_view StringTable::text(std::uint32_t id) const {
  return id >= 1 && id <= texts_.size() ? std::string_view(texts_[id - 1]) : std::string_view();
}

// ---- Publisher --------------------------------------------------------------------------

Publisher::Publisher(ring::RingWriter& ring, std::uint32_t pid, const LaunchJoin* join)
    : ring_(ring), pid_(pid), join_(join), external_(kExternalSlots) {}

void Publisher::queue(MessageType type, const void* payload, std::size_t size, const void* tail, std::size_t tailSize) {
  std::vector<std::uint8_t> bytes(size + tailSize);
  if (size) std::memcpy(bytes.data(), payload, size);
  if (tailSize) std::memcpy(bytes.data() + size, tail, tailSize);
  pending_.emplace_back(type, std::move(bytes));
}

std::uint32_t Publisher::intern(std::string_view text) {
  if (text.empty()) return 0;
  text = text.substr(0, kMaxString);
  auto [id, fresh] = strings_.intern(text);
  if (fresh) {
    ring::StringMessage m{id, static_cast<std::uint32_t>(text.size())};
    queue(MessageType::String, &m, sizeof m, text.data(), text.size());
  }
  return id;
}

void Publisher::addSite(const CapturedSite& site) {
  // A site's frames are bounded so its message always fits (see ring::kMaxMessage).
  const std::size_t npy = std::min<std::size_t>(site.python.size(), 1024);
  const std::size_t nnat = std::min<std::size_t>(site.native.size(), 1024);
  std::vector<ring::PythonFrameWire> py(npy);
  std::vector<ring::NativeFrameWire> nat(nnat);
  for (std::size_t i = 0; i < npy; ++i)
    py[i] = {intern(site.python[i].function), intern(site.python[i].file), site.python[i].line, site.python[i].evalCall};
  for (std::size_t i = 0; i < nnat; ++i)
    nat[i] = {site.native[i].pc, site.native[i].elfAddress, intern(site.native[i].module), intern(site.native[i].symbol)};
  ring::SiteMessage m{};
  m.id = site.id;
  m.cbid = site.cbid;
  m.api = intern(site.api);
  m.domain = site.domain;
  m.pythonCount = static_cast<std::uint16_t>(npy);
  m.nativeCount = static_cast<std::uint16_t>(nnat);
  m.attribution = static_cast<std::uint8_t>(site.attribution);
  m.waitKind = site.waitKind;
  m.callerTid = site.callerTid;
  std::vector<std::uint8_t> frames(npy * sizeof(ring::PythonFrameWire) + nnat * sizeof(ring::NativeFrameWire));
  if (npy) std::memcpy(frames.data(), py.data(), npy * sizeof py[0]);
  if (nnat) std::memcpy(frames.data() + npy * sizeof py[0], nat.data(), nnat * sizeof nat[0]);
  queue(MessageType::Site, &m, sizeof m, frames.data(), frames.size());
}

void Publisher::addCudaError(const CudaErrorInfo& e) {
  ring::CudaErrorMessage m{};
  m.result = e.result;
  m.domain = e.domain;
  m.cbid = e.cbid;
  m.tid = e.tid;
  m.api = intern(e.api);
  m.error = intern(e.error);
  m.lastKernel = intern(e.lastKernel);
  m.lastCorrelation = e.lastCorrelation;
  m.lastSite = e.lastSite;
  m.time = e.time;
  m.callerPc = e.callerPc;
  m.callerModule = intern(e.callerModule);
  m.callerElfAddress = e.callerElfAddress;
  const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(e.callers.size(), 16));
  std::vector<std::uint8_t> tail(8 + n * sizeof(ring::CallerWire));
  std::memcpy(tail.data(), &n, sizeof n);
  for (std::uint32_t i = 0; i < n; ++i) {
    ring::CallerWire w{e.callers[i].pc, e.callers[i].elfAddress, intern(e.callers[i].module), 0};
    std::memcpy(tail.data() + 8 + i * sizeof w, &w, sizeof w);
  }
  queue(MessageType::CudaError, &m, sizeof m, tail.data(), tail.size());
}

void Publisher::addGraphNode(std::uint64_t node, std::uint32_t site, ring::GraphNodeOrigin origin) {
  ring::GraphNodeMessage m{node, site, static_cast<std::uint32_t>(origin)};
  queue(MessageType::GraphNode, &m, sizeof m);
}

void Publisher::addDevice(const ring::DeviceMessage& device, std::string_view name) {
  ring::DeviceMessage m = device;
  m.name = intern(name);
  queue(MessageType::Device, &m, sizeof m);
}

void Publisher::addKernelMetrics(const KernelMetricsInfo& k) {
  ring::KernelMetricsMessage m{};
  m.correlation = k.correlation;
  m.kernel = k.kernel.empty() ? 0 : intern(k.kernel);
  m.error = k.error.empty() ? 0 : intern(k.error);
  m.result = k.result;
  m.request = k.request;
  m.remaining = k.remaining;
  m.device = k.device;
  m.passes = k.passes;
  m.time = k.time;
  m.smThroughputPct = k.smThroughputPct;
  m.dramThroughputPct = k.dramThroughputPct;
  m.achievedOccupancyPct = k.achievedOccupancyPct;
  m.durationNs = k.durationNs;
  queue(MessageType::KernelMetrics, &m, sizeof m);
}

bool Publisher::flushPending() {
  while (!pending_.empty()) {
    auto& [type, bytes] = pending_.front();
    if (!ring_.write(type, bytes.data(), bytes.size())) return false;
    pending_.pop_front();
  }
  return true;
}

void Publisher::finishRecord(GpuRecord& r, const ParsedActivity& item) {
  if (item.text) r.name = intern(item.text);
  if (r.pid == 0) r.pid = pid_;
  if (r.correlation != 0) {
    const External& x = external_[r.correlation & (kExternalSlots - 1)];
    if (x.correlation == r.correlation && r.externalId == 0) r.externalId = x.id;
    if (r.site == 0 && join_) r.site = join_->get(r.correlation);
  }
  switch (r.kind) {
    case RecordKind::Kernel:
      if (expectSites_ && r.site == 0) ring_.addUnjoinedLaunches(1);
      if (r.device < 64) devicesSeen_ |= std::uint64_t{1} << r.device;
      [[fallthrough]];
    case RecordKind::Memcpy:
    case RecordKind::Memset:
      contextDevice_[r.context] = r.device;
      break;
    case RecordKind::Synchronization:
    case RecordKind::GraphLaunch:
      if (auto it = contextDevice_.find(r.context); it != contextDevice_.end() && r.device == 0) r.device = it->second;
      break;
    default:
      break;
  }
}

void Publisher::publish(const ParsedActivity* items, std::size_t n) {
  out_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const ParsedActivity& item = items[i];
    switch (item.what) {
      case ParsedActivity::What::Skip:
        break;
      case ParsedActivity::What::ExternalCorrelation: {
        // CUPTI emits it before the API record it annotates; kernels follow later.
        External& x = external_[item.record.correlation & (kExternalSlots - 1)];
        x = {item.record.correlation, item.record.externalId};
        break;
      }
      case ParsedActivity::What::ObjectName: {
        if (pending_.size() >= kMaxPendingNames) {
          ring_.countDroppedMessages(1);
          break;
        }
        ring::ObjectNameMessage m{};
        m.objectKind = item.objectKind;
        std::copy(std::begin(item.objectIds), std::end(item.objectIds), m.ids);
        m.name = intern(item.text ? item.text : "");
        queue(MessageType::ObjectName, &m, sizeof m);
        break;
      }
      case ParsedActivity::What::MarkerStart: {
        if (openMarkers_.size() >= kMaxOpenMarkers) {
          ring_.countDroppedRecords(1);
          break;
        }
        GpuRecord r = item.record;
        finishRecord(r, item);
        openMarkers_[item.markerId] = r;
        break;
      }
      case ParsedActivity::What::MarkerEnd: {
        auto it = openMarkers_.find(item.markerId);
        if (it == openMarkers_.end()) break;  // its start came before collection began
        GpuRecord r = it->second;
        r.end = item.record.start;
        openMarkers_.erase(it);
        out_.push_back(r);
        break;
      }
      case ParsedActivity::What::MarkerInstant:
      case ParsedActivity::What::Record: {
        GpuRecord r = item.record;
        finishRecord(r, item);
        out_.push_back(r);
        break;
      }
    }
  }
  if (out_.empty()) {
    flushPending();
    return;
  }
  if (!flushPending()) {
    ring_.countDroppedRecords(out_.size());
    return;
  }
  const std::size_t written = ring_.writeRecords(out_.data(), out_.size());
  ring_.countDroppedRecords(out_.size() - written);
}

}  // namespace strata::cuda::collector
