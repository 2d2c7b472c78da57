// The GPU store: one SQLite file per session holding every GpuRecord, with the queries behind
// the GPU views (summary, timeline, one launch, Chrome export, read-only SQL).
// Layout, level-of-detail design and limits: backends/cuda/store/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "strata/cuda/device.hpp"
#include "strata/demangle.hpp"
#include "strata/cuda/occupancy.hpp"
#include "strata/cuda/record.hpp"
#include "strata/result.hpp"

namespace strata::cuda {

// The store's and the importers' error ids (strata/error_ids.hpp, 1900-1999), by short names.
namespace store_errors {
inline constexpr ErrorId kIo = errors::kStoreIo;
inline constexpr ErrorId kNotAStore = errors::kNotAStore;
inline constexpr ErrorId kMalformed = errors::kTraceMalformed;
inline constexpr ErrorId kSqlRejected = errors::kSqlRejected;
inline constexpr ErrorId kSql = errors::kSqlFailed;
inline constexpr ErrorId kNotFound = errors::kNoGpuRecord;
inline constexpr ErrorId kBadArgument = errors::kBadArguments;
inline constexpr ErrorId kReadOnly = errors::kStoreReadOnly;
inline constexpr ErrorId kInterrupted = errors::kQueryInterrupted;
inline constexpr ErrorId kNoOccupancy = errors::kNoOccupancy;
}  // namespace store_errors

struct TimeSpan {
  std::uint64_t startNs = 0, endNs = 0;
};

// --- gpuSummary -----------------------------------------------------------------------------
struct KernelStat {
  std::string name;  // demangled
  std::uint64_t count = 0, totalNs = 0, avgNs = 0, minNs = 0, maxNs = 0;
};
struct CopyStat {
  std::string kind;  // "HtoD", "DtoH", "DtoD", ... or "memset"
  std::uint64_t count = 0, bytes = 0, totalNs = 0;
};
struct SyncStat {
  std::string kind;  // "stream", "event", "context", "stream wait event", "unknown"
  std::uint64_t count = 0, totalNs = 0;
};
struct DeviceInfo {
  std::uint32_t device = 0;
  std::string name;              // empty when no properties were recorded
  bool propertiesKnown = false;  // occupancy can be estimated on this device
  std::uint64_t kernels = 0;
};
struct StreamInfo {
  std::uint32_t pid = 0, device = 0, stream = 0;
  std::uint64_t records = 0;
  TimeSpan timeSpan;
};
struct Summary {
  std::vector<KernelStat> kernels;  // by totalNs, the top `limit`
  std::vector<CopyStat> copies;
  std::vector<SyncStat> syncs;
  TimeSpan timeSpan;  // every timed record; {0,0} when none
  std::vector<DeviceInfo> devices;
  std::vector<StreamInfo> streams;
  std::uint64_t dropped = 0;   // records the collector lost (reported to addDropped)
  std::uint64_t records = 0;   // stored records of every kind
  std::uint64_t untimed = 0;   // records whose start time was 0 (kept, never on the timeline)
  std::uint64_t kernelNames = 0;  // distinct kernel names (kernels holds the top `limit`)
};

// --- gpuTimeline ----------------------------------------------------------------------------
enum class TrackKind : std::uint8_t { Gpu = 1, Cpu = 2 };
// One row of the timeline: a device stream (kernels, copies, syncs, GPU-side ranges) or a CPU
// thread (API calls, markers, framework ops).
struct Track {
  std::uint32_t id = 0;
  TrackKind kind = TrackKind::Gpu;
  std::uint32_t pid = 0, device = 0, stream = 0, tid = 0;
  std::string name;  // "GPU 0 stream 7", "thread 1234"
};
// One record (count == 1) or neighbours merged into one (count > 1): the time they cover,
// how much of it they were busy, and the longest of them (its id, name and kind).
struct TimelineItem {
  std::uint32_t track = 0;
  std::uint64_t startNs = 0, endNs = 0;
  std::uint64_t count = 1;
  std::uint64_t busyNs = 0;
  std::uint64_t id = 0;
  RecordKind kind = RecordKind::Kernel;
  std::uint32_t nameId = 0;  // the interned id of `name`
  std::string name;
};
struct Timeline {
  TimeSpan window;
  std::uint32_t maxItems = 0;
  int level = -1;             // -1: items are single records; else the level of detail used
  std::uint64_t bucketNs = 0;  // width the merged items were grouped by (0 for records)
  std::vector<Track> tracks;  // the tracks the items refer to
  std::vector<TimelineItem> items;  // by track, then start; never more than maxItems
  std::uint64_t tracksOmitted = 0;  // tracks left out because maxItems < tracks with data
};

// --- measured hardware metrics (kernel_metrics) -------------------------------------------------
// One launch measured by CUPTI's range profiler at a profile request, or why a request measured
// nothing (`error`). Joins its kernel record by (pid, correlation).
struct KernelMetrics {
  std::uint32_t pid = 0, correlation = 0, device = 0;
  std::uint32_t request = 0;   // the request's sequence number in its process (0: STRATA_GPU_PROFILE)
  std::string kernel;          // as launched (mangled); "" when the failure came before a launch
  std::uint64_t timeNs = 0;    // CLOCK_REALTIME
  std::uint32_t passes = 0;    // replay passes
  std::optional<double> smThroughputPct, dramThroughputPct, achievedOccupancyPct, durationNs;
  std::string error;           // "" when measured
  std::int32_t result = 0;     // the failing CUPTI call's result
};

// --- gpuKernel ------------------------------------------------------------------------------
struct RelatedRecord {
  std::uint64_t id = 0;
  RecordKind kind = RecordKind::RuntimeApi;
  std::string name;
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t startNs = 0, endNs = 0;
};
// A backward op and the forward op it is the backward of.
struct BackwardOf {
  RelatedRecord backward;  // the enclosing backward op ("AddmmBackward0")
  RelatedRecord forward;   // the forward op with its sequence number ("aten::addmm")
  std::int64_t sequenceNumber = 0;
  std::vector<PythonFrame> python;  // innermost first
};
// One launch site's frames, as stored.
struct SiteFrames {
  std::uint32_t site = 0;
  bool known = false;  // the store has the site
  SiteAttribution attribution = SiteAttribution::Unknown;
  std::uint32_t callerTid = 0;  // Caller: the Python thread that waited for the launch
  std::string waitedIn;         // Caller: in what ("backward")
  std::vector<PythonFrame> python;     // innermost first
  std::vector<std::uint64_t> native;   // return addresses, innermost first (unresolved)
  // The same frames with what was resolved when they were stored: function, file and line
  // (DWARF, by the live reader), module, address in it and symbol (the collector); as many as
  // `native`, in the same order, or empty.
  std::vector<NativeFrame> nativeFrames;
};
// A kernel a CUDA graph replay ran: the node and the site that put it into the graph.
struct GraphCapture {
  std::uint64_t node = 0;
  std::string origin;  // "captured" (stream capture), "added" (cudaGraphAdd*Node), "cloned"
  SiteFrames site;
};

struct RecordDetail {
  std::uint64_t id = 0;
  GpuRecord record;         // as stored; `name` is the interned id
  std::string name;         // demangled
  std::string mangledName;  // as recorded (equal to name when it was not mangled)
  std::uint64_t durationNs = 0;
  std::optional<DeviceProperties> device;
  std::optional<Occupancy> occupancy;  // kernels on a device with known properties
  std::string occupancyNote;           // why there is no estimate
  bool siteKnown = false;
  std::vector<PythonFrame> python;     // innermost first
  std::vector<std::uint64_t> native;   // return addresses, innermost first (unresolved)
  // The same frames with what was resolved when they were stored: function, file and line
  // (DWARF, by the live reader), module, address in it and symbol (the collector); as many as
  // `native`, in the same order, or empty.
  std::vector<NativeFrame> nativeFrames;
  std::optional<RelatedRecord> launch;  // the runtime/driver call with the same correlation
  std::optional<RelatedRecord> op;      // the framework op (CpuOp) with the same external id
  // Kernels: the launch's measured metrics, or the profiling failure of that launch.
  std::optional<KernelMetrics> metrics;
  // How the record's Python frames relate to it, and who waited for it (see SiteFrames).
  SiteAttribution attribution = SiteAttribution::Unknown;
  std::uint32_t callerTid = 0;
  std::string waitedIn;
  // A kernel of a graph replay: where its node was captured (`python`/`native` are then the
  // frames of the replay's cudaGraphLaunch).
  std::optional<GraphCapture> capture;
  // A kernel a backward op launched (an imported torch.profiler trace, whose backward thread
  // runs no Python): that op, the forward op autograd paired it with (the same sequence
  // number) and the Python frames the forward op ran in, innermost first.
  std::optional<BackwardOf> backwardOf;
};

// --- gpuExport --------------------------------------------------------------------------------
enum class ExportFormat { Chrome, Perfetto };
struct ExportOptions {
  std::optional<TimeSpan> window;  // only records overlapping it
};
struct ExportReport {
  std::uint64_t events = 0;          // trace events written (records)
  std::uint64_t skippedUntimed = 0;  // records with no start time
  std::uint64_t bytes = 0;
  std::uint32_t extraLanes = 0;  // lanes added so that events on one lane nest
};

// --- !sql -------------------------------------------------------------------------------------
using SqlValue = std::variant<std::monostate, std::int64_t, double, std::string>;
struct SqlResult {
  std::vector<std::string> columns;
  std::vector<std::vector<SqlValue>> rows;
  bool truncated = false;  // more rows than maxRows
};

// Cheap counts for the gpuActivity event (no SQL).
struct ActivityCounts {
  std::uint64_t records = 0, kernels = 0, copies = 0, dropped = 0;
  TimeSpan timeSpan;
};

struct StoreOptions {
  bool readOnly = false;
  // Memory bounds of ingestion (the defaults hold any trace in about 40 MiB; tests lower them):
  // records buffered over all tracks (128 B each), open level-of-detail entries (~80 B each).
  std::size_t maxBufferedRecords = std::size_t{1} << 18;
  std::size_t maxOpenLodEntries = std::size_t{1} << 19;
};

// One store per session; not thread-safe (the session's strand owns it). Queries first write
// what is buffered, so they see everything ingested before them.
class Store {
 public:
  // A new store at `path` (an existing file there is an error, never overwritten).
  static Result<std::unique_ptr<Store>> create(const std::string& path, StoreOptions options = {});
  // An existing store file (written by create, by any Strata version with this format).
  static Result<std::unique_ptr<Store>> open(const std::string& path, StoreOptions options = {});
  ~Store();  // close(): what is buffered is written; the file is left as one self-contained file
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  Result<void> close();
  const std::string& path() const;
  bool readOnly() const;

  // --- Writing ---
  // The store's id for a name (kernel name as recorded, API name, marker text). Mangled
  // names are demangled once, here.
  std::uint32_t internName(std::string_view text);
  // Records name strings by internName ids and launch sites by (pid, site). Ids are assigned
  // as records are written (kept stable after).
  Result<void> ingest(std::span<const GpuRecord> records);
  Result<void> addLaunchSite(const LaunchSite& site);
  Result<void> addGraphNode(const GraphNodeSite& node);
  Result<void> setDeviceProperties(const DeviceProperties& properties);
  Result<void> addDropped(std::uint32_t pid, std::uint64_t count);
  Result<void> setMeta(std::string_view key, std::string_view value);
  Result<void> addKernelMetrics(const KernelMetrics& metrics);
  // Writes everything buffered and commits. The collector's bridge calls it at every flush
  // tick and stop; queries call it themselves.
  Result<void> flush();
  // Everything `body` writes commits together, or nothing does (importers: never a
  // half-imported trace). What was buffered before is committed first.
  Result<void> atomically(const std::function<Result<void>()>& body);

  // --- Reading ---
  ActivityCounts counts() const;
  std::optional<DeviceProperties> deviceProperties(std::uint32_t device);
  std::optional<std::string> meta(std::string_view key);
  Result<std::string> nameOf(std::uint32_t id);
  Result<Summary> summary(std::size_t limit);
  // Items overlapping [startNs, endNs), at most maxItems in all.
  Result<Timeline> timeline(std::uint64_t startNs, std::uint64_t endNs, std::uint32_t maxItems);
  Result<RecordDetail> kernel(std::uint64_t id);
  // Every kernel_metrics row, oldest first (pid 0: every process).
  Result<std::vector<KernelMetrics>> kernelMetrics(std::uint32_t pid = 0);
  // A file ui.perfetto.dev opens: Chrome trace-event JSON, or Perfetto's protobuf trace
  // (TrackEvent slices). Written to `path`.tmp, then renamed.
  Result<ExportReport> exportTrace(const std::string& path, ExportFormat format, const ExportOptions& options = {});
  Result<ExportReport> exportChrome(const std::string& path, const ExportOptions& options = {});
  // One read-only statement over the documented tables (README); at most maxRows rows,
  // stopped after timeoutMs.
  Result<SqlResult> sql(std::string_view query, std::size_t maxRows, unsigned timeoutMs = 10000);

  struct Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  // The CpuOps running on thread (pid, tid) at `ns`, innermost first (pid 0: any process).
  Result<std::vector<TimelineItem>> enclosingOps(std::uint32_t pid, std::uint32_t tid, std::uint64_t ns);
  // The innermost backward op among `enclosing` and the forward op it is the backward of.
  Result<std::optional<BackwardOf>> backwardOf(const std::vector<TimelineItem>& enclosing);
  std::unique_ptr<Impl> impl_;
};

// Names the CUPTI enumerations the way the views show them.
std::string_view copyKindName(std::uint8_t copyKind);  // "HtoD", ...
std::string_view syncKindName(std::uint8_t syncKind);  // "stream", "event", ...
using ::strata::demangle;  // strata/demangle.hpp

}  // namespace strata::cuda
