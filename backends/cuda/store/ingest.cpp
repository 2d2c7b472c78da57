// Ingestion: records into per-track buffers, buffers into encoded chunks, chunks into the
// level-of-detail pages and the statistics the summary reads. The hot path of the store.
#include <algorithm>
#include <bit>
#include <numeric>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

// Outside an importer's transaction, commit every this many chunks (~1M records) so the
// write-ahead log stays small even when nobody calls flush().
constexpr std::uint64_t kChunksPerCommit = 1024;

std::string trackName(const Track& t) {
  if (t.kind == TrackKind::Cpu) {
    return "thread " + std::to_string(t.tid) + (t.pid ? " (pid " + std::to_string(t.pid) + ")" : "");
  }
  return "GPU " + std::to_string(t.device) + " stream " + std::to_string(t.stream) +
         (t.pid ? " (pid " + std::to_string(t.pid) + ")" : "");
}

int durationClass(std::uint64_t d) { return 64 - std::countl_zero(d); }  // d < 2^class

}  // namespace

Result<std::uint32_t> Store::Impl::trackFor(const GpuRecord& r) {
  TrackKey key = onCpuTrack(r) ? TrackKey{2, r.pid, r.tid, 0} : TrackKey{1, r.pid, r.device, r.stream};
  if (lastTrack && key == lastKey) return lastTrack;
  std::uint32_t id;
  if (auto it = trackByKey.find(key); it != trackByKey.end()) {
    id = it->second;
  } else {
    TrackState t;
    t.info.id = static_cast<std::uint32_t>(tracks.size() + 1);
    t.info.kind = key.kind == 2 ? TrackKind::Cpu : TrackKind::Gpu;
    t.info.pid = r.pid;
    if (t.info.kind == TrackKind::Cpu) {
      t.info.tid = r.tid;
    } else {
      t.info.device = r.device;
      t.info.stream = r.stream;
    }
    t.info.name = trackName(t.info);
    t.maxPage.fill(-1);
    t.maxPageKnown = true;  // a new track has nothing on disk
    t.dirty = true;
    id = t.info.id;
    tracks.push_back(std::move(t));
    trackByKey.emplace(key, id);
  }
  lastKey = key;
  lastTrack = id;
  return id;
}

Result<void> Store::ingest(std::span<const GpuRecord> records) {
  Impl& m = *impl_;
  if (m.readOnly) return Error{kReadOnly, m.path + ": the store was opened read-only", true};
  // A name id the store never handed out would index the statistics out of range: refuse the
  // whole batch before any of it is buffered.
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].name >= m.nextNameId) {
      return Error{kBadArgument, "ingest: record " + std::to_string(i) + " names id " + std::to_string(records[i].name) +
                                     ", which internName never returned", true};
    }
  }
  if (auto r = m.beginWrite(); !r) return r;
  for (const GpuRecord& r : records) {
    auto tid = m.trackFor(r);
    if (!tid) return tid.takeError();
    TrackState& t = m.tracks[*tid - 1];
    bool timed = isTimed(r);
    std::uint64_t d = effectiveEnd(r) - r.start;
    switch (r.kind) {
      case RecordKind::Kernel:
        if (r.name >= m.kernelStats.size()) m.kernelStats.resize(r.name + 1);
        m.kernelStats[r.name].add(timed, d);
        m.kernelStats[r.name].dirty = true;
        ++m.kernels;
        ++t.kernels;
        break;
      case RecordKind::Memcpy:
      case RecordKind::Memset: {
        CopyAgg& c = m.copyStats[{static_cast<std::uint8_t>(r.kind), r.kind == RecordKind::Memcpy ? r.copyKind : std::uint8_t{0}}];
        ++c.count;
        c.bytes += r.bytes;
        c.total += timed ? d : 0;
        c.dirty = true;
        ++m.copies;
        break;
      }
      case RecordKind::Synchronization: {
        CopyAgg& c = m.syncStats[r.copyKind];
        ++c.count;
        c.total += timed ? d : 0;
        c.dirty = true;
        break;
      }
      case RecordKind::RuntimeApi:
      case RecordKind::DriverApi: {
        if (r.name >= m.apiStats.size()) m.apiStats.resize(r.name + 1);
        Agg& a = m.apiStats[r.name];
        a.kind = static_cast<std::uint8_t>(r.kind);
        a.add(timed, d);
        a.errors += r.result != 0;
        a.dirty = true;
        break;
      }
      default:
        break;
    }
    ++t.records;
    ++m.records;
    t.kinds |= kindBit(r.kind);
    t.dirty = true;
    if (!timed) {
      ++t.untimed;
      ++m.untimed;
    } else {
      if (t.start == 0 || r.start < t.start) t.start = r.start;
      if (effectiveEnd(r) > t.end) t.end = effectiveEnd(r);
      // A chunk's starts never spread over more than kLongNs (the raw timeline query relies on it).
      bool hasTimed = t.bufMinStart != 0;
      if (hasTimed && (std::max(t.bufMaxStart, r.start) - std::min(t.bufMinStart, r.start) > lod::kLongNs)) {
        if (auto e = m.flushChunk(t); !e) return e;
      }
      if (t.bufMinStart == 0 || r.start < t.bufMinStart) t.bufMinStart = r.start;
      if (r.start > t.bufMaxStart) t.bufMaxStart = r.start;
    }
    t.buffer.push_back(r);
    ++m.buffered;
    if (t.buffer.size() == codec::kChunkCapacity) {
      if (auto e = m.flushChunk(t); !e) return e;
    }
    // Past the bound (StoreOptions) the largest buffers are written early: memory stays
    // bounded however many tracks a trace has.
    if (m.buffered > m.maxBuffered) {
      std::vector<TrackState*> order;
      for (auto& x : m.tracks) if (!x.buffer.empty()) order.push_back(&x);
      std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->buffer.size() > b->buffer.size(); });
      for (TrackState* x : order) {
        if (m.buffered <= m.maxBuffered / 2) break;
        if (auto e = m.flushChunk(*x); !e) return e;
      }
    }
  }
  if (m.atomicDepth == 0 && m.chunksSinceCommit >= kChunksPerCommit) {
    if (auto r = m.writeBuffered(); !r) return r;
    return m.commit();
  }
  return {};
}

Result<void> Store::Impl::flushChunk(TrackState& t) {
  if (t.buffer.empty()) return {};
  auto& buf = t.buffer;
  // By start, the longer first among equal starts: the order an enclosing range comes in.
  auto before = [](const GpuRecord& a, const GpuRecord& b) {
    return a.start != b.start ? a.start < b.start : effectiveEnd(a) > effectiveEnd(b);
  };
  if (!std::is_sorted(buf.begin(), buf.end(), before)) std::stable_sort(buf.begin(), buf.end(), before);
  std::int64_t chunkId = nextChunkId;
  std::string blob;
  blob.reserve(buf.size() * 24);
  codec::encode(buf.data(), buf.size(), blob);
  std::uint64_t start = 0, end = 0;
  std::uint32_t kinds = 0;
  for (const GpuRecord& r : buf) {
    kinds |= kindBit(r.kind);
    if (!isTimed(r)) continue;
    if (start == 0) start = r.start;  // sorted: the first timed one is the earliest
    end = std::max(end, effectiveEnd(r));
  }
  st.insChunk.bind(1, chunkId).bind(2, t.info.id).bindU(3, start).bindU(4, end)
      .bind(5, static_cast<std::int64_t>(buf.size())).bind(6, kinds).bindBlob(7, blob.data(), blob.size());
  if (auto r = sql::run(db, st.insChunk, kIo, path + ": writing a chunk"); !r) return r;
  ++nextChunkId;
  ++chunksSinceCommit;
  for (std::uint32_t i = 0; i < buf.size(); ++i) {
    const GpuRecord& r = buf[i];
    if (!isTimed(r)) continue;
    std::uint64_t id = codec::recordId(static_cast<std::uint64_t>(chunkId), i);
    std::uint64_t e = effectiveEnd(r);
    if (e - r.start >= lod::kLongNs) {
      int dc = durationClass(e - r.start);
      t.longClasses |= std::uint64_t{1} << dc;
      st.insLong.bindU(1, id).bind(2, t.info.id).bind(3, dc).bindU(4, r.start).bindU(5, e)
          .bind(6, static_cast<std::uint8_t>(r.kind)).bind(7, r.name);
      if (auto x = sql::run(db, st.insLong, kIo, path + ": writing long_records"); !x) return x;
    }
    if (auto x = lodAdd(t, r.start, e, id, r.name, static_cast<std::uint8_t>(r.kind)); !x) return x;
  }
  buffered -= buf.size();
  buf.clear();
  t.bufMinStart = t.bufMaxStart = 0;
  if (lodEntriesOpen > maxOpenEntries) {
    for (auto& x : tracks) {
      if (auto r = flushPages(x, /*drop=*/true); !r) return r;
    }
  }
  return {};
}

Result<void> Store::Impl::lodAdd(TrackState& t, std::uint64_t start, std::uint64_t end, std::uint64_t id,
                                 std::uint32_t name, std::uint8_t kind) {
  for (int level = 0; level < lod::kLevels; ++level) {
    std::uint64_t bucket = start >> lod::shift(level);
    auto page = static_cast<std::int64_t>(bucket >> lod::kPageShift);
    OpenPage& p = t.pages[level];
    if (p.page != page) {
      if (auto r = switchPage(t, level, page); !r) return r;
    }
    auto& es = p.entries;
    lod::Entry* e;
    if (!es.empty() && es.back().bucket == bucket) {
      e = &es.back();
    } else if (es.empty() || es.back().bucket < bucket) {
      es.push_back(lod::Entry{.bucket = bucket});
      ++lodEntriesOpen;
      e = &es.back();
    } else {
      auto it = std::lower_bound(es.begin(), es.end(), bucket, [](const lod::Entry& x, std::uint64_t b) { return x.bucket < b; });
      if (it == es.end() || it->bucket != bucket) {
        it = es.insert(it, lod::Entry{.bucket = bucket});
        ++lodEntriesOpen;
      }
      e = &*it;
    }
    lod::add(*e, start, end, id, name, kind);
    p.dirty = true;
  }
  return {};
}

Result<void> Store::Impl::switchPage(TrackState& t, int level, std::int64_t page) {
  OpenPage& p = t.pages[level];
  if (p.dirty) {
    std::string blob;
    lod::encodePage(level, static_cast<std::uint64_t>(p.page), p.entries, blob);
    st.insLod.bind(1, t.info.id).bind(2, level).bind(3, p.page).bindBlob(4, blob.data(), blob.size());
    if (auto r = sql::run(db, st.insLod, kIo, path + ": writing lod"); !r) return r;
    t.maxPage[level] = std::max(t.maxPage[level], p.page);
  }
  lodEntriesOpen -= p.entries.size();
  p.entries.clear();
  p.dirty = false;
  p.page = page;
  if (page < 0) return {};
  if (!t.maxPageKnown) {
    t.maxPage.fill(-1);
    st.selMaxPage.bind(1, t.info.id);
    while (st.selMaxPage.step() == SQLITE_ROW) {
      auto l = st.selMaxPage.i64(0);
      if (l >= 0 && l < lod::kLevels) t.maxPage[l] = st.selMaxPage.i64(1);
    }
    st.selMaxPage.reset();
    t.maxPageKnown = true;
  }
  if (page > t.maxPage[level]) return {};  // past everything written: a new page
  // Records that came late (or a store reopened): continue the page already on disk.
  st.selLod.bind(1, t.info.id).bind(2, level).bind(3, page);
  bool ok = true;
  if (st.selLod.step() == SQLITE_ROW) {
    ok = lod::decodePage(st.selLod.blob(0), level, static_cast<std::uint64_t>(page), p.entries);
  }
  st.selLod.reset();
  if (!ok) return Error{kNotAStore, path + ": a malformed lod page (track " + std::to_string(t.info.id) + ")", true};
  lodEntriesOpen += p.entries.size();
  return {};
}

Result<void> Store::Impl::flushPages(TrackState& t, bool drop) {
  for (int level = 0; level < lod::kLevels; ++level) {
    OpenPage& p = t.pages[level];
    if (p.page < 0) continue;
    if (drop) {
      if (auto r = switchPage(t, level, -1); !r) return r;
      continue;
    }
    if (!p.dirty) continue;
    std::string blob;
    lod::encodePage(level, static_cast<std::uint64_t>(p.page), p.entries, blob);
    st.insLod.bind(1, t.info.id).bind(2, level).bind(3, p.page).bindBlob(4, blob.data(), blob.size());
    if (auto r = sql::run(db, st.insLod, kIo, path + ": writing lod"); !r) return r;
    t.maxPage[level] = std::max(t.maxPage[level], p.page);
    p.dirty = false;
  }
  return {};
}

Result<void> Store::Impl::writeStats() {
  for (TrackState& t : tracks) {
    if (!t.dirty) continue;
    st.upTrack.bind(1, t.info.id).bindStaticText(2, t.info.kind == TrackKind::Cpu ? "cpu" : "gpu")
        .bind(3, t.info.pid).bind(4, t.info.device).bind(5, t.info.stream).bind(6, t.info.tid)
        .bindText(7, t.info.name).bindU(8, t.records).bindU(9, t.kernels).bindU(10, t.untimed)
        .bindU(11, t.start).bindU(12, t.end).bind(13, t.kinds).bindU(14, t.longClasses);
    if (auto r = sql::run(db, st.upTrack, kIo, path + ": writing tracks"); !r) return r;
    t.dirty = false;
  }
  for (std::uint32_t id = 0; id < kernelStats.size(); ++id) {
    Agg& a = kernelStats[id];
    if (!a.dirty) continue;
    st.upKernelStat.bind(1, id).bindU(2, a.count).bindU(3, a.timed).bindU(4, a.total).bindU(5, a.min).bindU(6, a.max);
    if (auto r = sql::run(db, st.upKernelStat, kIo, path + ": writing kernel_stats"); !r) return r;
    a.dirty = false;
  }
  for (std::uint32_t id = 0; id < apiStats.size(); ++id) {
    Agg& a = apiStats[id];
    if (!a.dirty) continue;
    st.upApiStat.bind(1, id).bind(2, a.kind).bindU(3, a.count).bindU(4, a.timed).bindU(5, a.total)
        .bindU(6, a.min).bindU(7, a.max).bindU(8, a.errors);
    if (auto r = sql::run(db, st.upApiStat, kIo, path + ": writing api_stats"); !r) return r;
    a.dirty = false;
  }
  for (auto& [key, c] : copyStats) {
    if (!c.dirty) continue;
    st.upCopyStat.bind(1, key.first).bind(2, key.second).bindU(3, c.count).bindU(4, c.bytes).bindU(5, c.total);
    if (auto r = sql::run(db, st.upCopyStat, kIo, path + ": writing copy_stats"); !r) return r;
    c.dirty = false;
  }
  for (auto& [kind, c] : syncStats) {
    if (!c.dirty) continue;
    st.upSyncStat.bind(1, kind).bindU(2, c.count).bindU(3, c.total);
    if (auto r = sql::run(db, st.upSyncStat, kIo, path + ": writing sync_stats"); !r) return r;
    c.dirty = false;
  }
  return {};
}

Result<void> Store::Impl::writeBuffered() {
  if (readOnly) return {};
  bool anything = inTxn;
  for (auto& t : tracks) anything = anything || t.dirty || !t.buffer.empty();
  if (!anything) return {};
  if (auto r = beginWrite(); !r) return r;
  for (auto& t : tracks) {
    if (auto r = flushChunk(t); !r) return r;
  }
  for (auto& t : tracks) {
    if (auto r = flushPages(t, /*drop=*/false); !r) return r;
  }
  return writeStats();
}

}  // namespace strata::cuda
