// Turns parsed activity and captured launch sites into ring messages: interns strings, keeps
// every string and site ahead of the first record that uses it, pairs NVTX range ends with
// their starts, and joins external correlation ids and launch sites by correlation id.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "launch_sites.hpp"
#include "ring_writer.hpp"
#include "strata/cuda/record.hpp"

namespace strata::cuda::collector {

// One CUPTI activity record as the parser read it, before interning.
struct ParsedActivity {
  enum class What : std::uint8_t { Skip, Record, MarkerStart, MarkerEnd, MarkerInstant, ExternalCorrelation, ObjectName };
  What what = What::Skip;
  GpuRecord record;             // everything but `name` (and `site`, joined later)
  const char* text = nullptr;   // interned into record.name; CUPTI's memory, valid during the callback
  std::uint32_t markerId = 0;
  std::uint32_t objectKind = 0;
  std::uint32_t objectIds[3] = {0, 0, 0};
};

// Correlation id -> launch site, written by launch callbacks on any thread and read when
// records are published, without a lock: direct-mapped, so a slot overwritten by a later
// launch before its kernel's record arrived loses that join (counted as unjoined).
class LaunchJoin {
 public:
  explicit LaunchJoin(std::size_t slots = 1 << 18);
  void set(std::uint32_t correlation, std::uint32_t site);
  std::uint32_t get(std::uint32_t correlation) const;  // 0: not known

 private:
  std::unique_ptr<std::atomic<std::uint64_t>[]> slots_;
  std::size_t mask_;
};

class StringTable {
 public:
  // The id of `text` (from 1) and whether it was new.
  std::pair<std::uint32_t, bool> intern(std::string_view text);
  std::string_view text(std::uint32_t id) const;
  std::size_t size() const { return texts_.size(); }

 private:
  std::deque<std::string> texts_;  // stable addresses: ids_ keys point into it
  std::unordered_map<std::string_view, std::uint32_t> ids_;
};

struct CudaErrorInfo {
  int result = 0;
  std::uint32_t domain = 0, cbid = 0, tid = 0;
  std::string api, error, lastKernel;
  std::uint32_t lastCorrelation = 0, lastSite = 0;
  std::uint64_t time = 0, callerPc = 0;
  std::string callerModule;
  std::uint64_t callerElfAddress = 0;
  std::vector<NativeFrameText> callers;  // callerPc and the frames outside it, innermost first
};

// One launch's hardware metrics (or why none were measured) as the collector hands them over.
struct KernelMetricsInfo {
  std::uint32_t correlation = 0, device = 0, request = 0, remaining = 0, passes = 0;
  std::string kernel, error;  // error "" when measured
  int result = 0;
  std::uint64_t time = 0;
  // NaN when not measured.
  double smThroughputPct = kNotMeasured, dramThroughputPct = kNotMeasured, achievedOccupancyPct = kNotMeasured,
         durationNs = kNotMeasured;
  static constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();
};

class Publisher {
 public:
  Publisher(ring::RingWriter& ring, std::uint32_t pid, const LaunchJoin* join);

  // Everything below runs under the collector's producer lock.
  std::uint32_t intern(std::string_view text);  // queues the string the first time it is seen
  void addSite(const CapturedSite& site);
  void addCudaError(const CudaErrorInfo& error);
  void addKernelMetrics(const KernelMetricsInfo& metrics);  // never dropped, like errors
  // A CUDA graph node and the site of the call that made it (after that site's own message).
  void addGraphNode(std::uint64_t node, std::uint32_t site, ring::GraphNodeOrigin origin);
  void addDevice(const ring::DeviceMessage& device, std::string_view name);
  // Devices (ordinals below 64) kernels were seen on, as a bit set.
  std::uint64_t devicesSeen() const { return devicesSeen_; }
  // Records that find the ring full (or their strings still queued) are dropped and counted.
  void publish(const ParsedActivity* items, std::size_t n);
  // Writes queued strings, sites, errors and names in order; true when none is left.
  bool flushPending();
  std::size_t pendingMessages() const { return pending_.size(); }
  // In stacks mode a kernel without a joined site is counted (unjoinedLaunches).
  void expectSites(bool on) { expectSites_ = on; }
  std::size_t openMarkers() const { return openMarkers_.size(); }

 private:
  void queue(ring::MessageType type, const void* payload, std::size_t size, const void* tail = nullptr,
             std::size_t tailSize = 0);
  void finishRecord(GpuRecord& r, const ParsedActivity& item);

  ring::RingWriter& ring_;
  std::uint32_t pid_;
  const LaunchJoin* join_;
  bool expectSites_ = false;
  StringTable strings_;
  std::deque<std::pair<ring::MessageType, std::vector<std::uint8_t>>> pending_;
  std::unordered_map<std::uint32_t, GpuRecord> openMarkers_;  // NVTX range id -> its start
  struct External {
    std::uint32_t correlation = 0;
    std::uint64_t id = 0;
  };
  std::vector<External> external_;                         // direct-mapped by correlation id
  std::unordered_map<std::uint32_t, std::uint32_t> contextDevice_;  // for records without a device
  std::vector<GpuRecord> out_;
  std::uint64_t devicesSeen_ = 0;
};

}  // namespace strata::cuda::collector
