// The store's private state, shared by the files that implement it (ingestion, queries,
// export, SQL). One owner thread; see store.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chunk_codec.hpp"
#include "lod.hpp"
#include "sqlite.hpp"
#include "strata/cuda/store.hpp"

namespace strata::cuda {

// 2: site_frames.module, and native frames' function/file/line.
inline constexpr int kStoreFormatVersion = 2;
inline constexpr const char* kStoreFormatName = "strata-gpu-store";

// Duration statistics of one name (kernels, API calls).
struct Agg {
  std::uint64_t count = 0, timed = 0, total = 0, min = 0, max = 0, errors = 0;
  std::uint8_t kind = 0;
  bool dirty = false;
  void add(bool isTimed, std::uint64_t d) {
    ++count;
    if (!isTimed) return;
    if (timed == 0 || d < min) min = d;
    if (d > max) max = d;
    total += d;
    ++timed;
  }
};
struct CopyAgg {
  std::uint64_t count = 0, bytes = 0, total = 0;
  bool dirty = false;
};

struct TrackKey {
  std::uint8_t kind;
  std::uint32_t pid, a, b;  // GPU: device, stream; CPU: tid, 0
  bool operator==(const TrackKey&) const = default;
};
struct TrackKeyHash {
  std::size_t operator()(const TrackKey& k) const {
    std::uint64_t h = k.kind;
    h = h * 0x9E3779B97F4A7C15ull ^ k.pid;
    h = h * 0x9E3779B97F4A7C15ull ^ k.a;
    h = h * 0x9E3779B97F4A7C15ull ^ k.b;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// Lookups by string_view without building a std::string (internName is on the import path).
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct OpenPage {
  std::int64_t page = -1;
  std::vector<lod::Entry> entries;  // sorted by bucket
  bool dirty = false;
};

struct TrackState {
  Track info;
  std::uint64_t records = 0, kernels = 0, untimed = 0;
  std::uint64_t start = 0, end = 0;  // over timed records; 0/0 when none
  std::uint32_t kinds = 0;            // bit per RecordKind
  std::uint64_t longClasses = 0;      // bit per duration class present in long_records
  bool dirty = false;
  std::vector<GpuRecord> buffer;      // not yet in a chunk
  std::uint64_t bufMinStart = 0, bufMaxStart = 0;  // over timed buffered records
  std::array<OpenPage, lod::kLevels> pages;
  std::array<std::int64_t, lod::kLevels> maxPage{};  // highest page on disk per level
  bool maxPageKnown = false;
};

struct Store::Impl {
  std::string path;
  bool readOnly = false;
  std::size_t maxBuffered = 0, maxOpenEntries = 0;  // StoreOptions' bounds
  sql::Db db;
  struct Statements {
    sql::Stmt insChunk, insLod, selLod, selLodRange, insLong, insString, selStringByText,
        selStringById, upTrack, upKernelStat, upApiStat, upCopyStat, upSyncStat, upDevice,
        insSite, delFrames, insFrame, addDropped, setMeta, selChunk, selChunksInRange, selChunksBefore,
        selLongRange, selMaxPage;
  } st;
  bool inTxn = false;
  int atomicDepth = 0;
  bool siteColumns = true;  // launch_sites.attribution and site_frames.eval_call exist
  bool graphNodes = true;   // graph_nodes exists
  std::uint64_t chunksSinceCommit = 0;

  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> nameIds;  // a cache, cleared when large
  std::unordered_map<std::uint32_t, std::string> nameTexts;  // demangled, a cache
  std::uint32_t nextNameId = 1;

  std::vector<TrackState> tracks;  // index = id - 1
  std::unordered_map<TrackKey, std::uint32_t, TrackKeyHash> trackByKey;
  TrackKey lastKey{0, 0, 0, 0};
  std::uint32_t lastTrack = 0;
  std::uint64_t buffered = 0;
  std::uint64_t lodEntriesOpen = 0;

  std::vector<Agg> kernelStats;  // by name id
  std::vector<Agg> apiStats;     // by name id
  std::map<std::pair<std::uint8_t, std::uint8_t>, CopyAgg> copyStats;  // (kind, copyKind)
  std::map<std::uint8_t, CopyAgg> syncStats;                            // by sync kind
  std::uint64_t records = 0, kernels = 0, copies = 0, untimed = 0, dropped = 0;
  std::int64_t nextChunkId = 1;
  std::map<std::uint32_t, DeviceProperties> devices;

  // The read-only connection `sql()` runs on (opened on first use).
  sql::Db reader;
  std::string sqlRefused;  // what its authorizer refused last

  // --- kernel.cpp ---
  SiteFrames siteFrames(std::uint32_t pid, std::uint32_t site);

  // --- store.cpp ---
  Result<void> prepareStatements();
  Result<void> loadState();
  Result<void> beginWrite();
  Result<void> commit();
  Result<void> rollback();
  Result<void> writeBuffered();  // chunks, pages, stats; no commit
  Result<void> flushChunk(TrackState& t);
  Result<void> flushPages(TrackState& t, bool drop);
  Result<void> writeStats();
  Result<std::uint32_t> trackFor(const GpuRecord& r);
  Result<void> lodAdd(TrackState& t, std::uint64_t start, std::uint64_t end, std::uint64_t id,
                      std::uint32_t name, std::uint8_t kind);
  Result<void> switchPage(TrackState& t, int level, std::int64_t page);
  std::string nameText(std::uint32_t id);
  // --- metrics.cpp ---
  std::optional<KernelMetrics> launchMetrics(std::uint32_t pid, std::uint32_t correlation);

  // --- queries ---
  Result<void> readChunk(std::int64_t chunkId, codec::ColumnMask mask, std::vector<GpuRecord>& out,
                         std::uint32_t* track = nullptr);
  // LOD entries of one track at `level` whose bucket is in [lo, hi]; false if more than limit.
  Result<bool> readEntries(const TrackState& t, int level, std::uint64_t lo, std::uint64_t hi,
                           std::size_t limit, std::vector<lod::Entry>& out);
};

inline bool isTimed(const GpuRecord& r) { return r.start != 0; }
inline std::uint64_t effectiveEnd(const GpuRecord& r) { return r.end > r.start ? r.end : r.start; }
inline std::uint32_t kindBit(RecordKind k) { return 1u << static_cast<std::uint8_t>(k); }
bool onCpuTrack(const GpuRecord& r);

}  // namespace strata::cuda
