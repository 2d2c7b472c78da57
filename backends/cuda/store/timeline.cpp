// gpuTimeline: the records overlapping a window when they fit in maxItems, else the finest
// level-of-detail buckets that fit (neighbours merged, with counts), never more than maxItems.
#include <algorithm>
#include <bit>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

// The most records a query decodes to group them finer than the stored levels (a few ms).
constexpr std::uint64_t kMaxRawRecords = 1u << 17;

struct Cell {
  std::uint32_t track;
  lod::Entry e;
};

std::uint64_t sumCounts(const std::vector<Cell>& cells) {
  std::uint64_t n = 0;
  for (const Cell& c : cells) n += c.e.count;
  return n;
}

// Groups cells of one track whose buckets agree above the low `by` bits. Cells are sorted by
// (track, bucket).
std::vector<Cell> coarsen(const std::vector<Cell>& cells, int by) {
  std::vector<Cell> out;
  for (const Cell& c : cells) {
    std::uint64_t key = by >= 64 ? 0 : c.e.bucket >> by;
    if (!out.empty() && out.back().track == c.track && (by >= 64 ? 0 : out.back().e.bucket) == key) {
      lod::merge(out.back().e, c.e);
      continue;
    }
    Cell n = c;
    n.e.bucket = key;
    out.push_back(n);
  }
  return out;
}

}  // namespace

Result<Timeline> Store::timeline(std::uint64_t s, std::uint64_t e, std::uint32_t maxItems) {
  if (e <= s) return Error{kBadArgument, "gpuTimeline: endNs (" + std::to_string(e) + ") must be greater than startNs (" + std::to_string(s) + ")", true};
  if (maxItems == 0) return Error{kBadArgument, "gpuTimeline: maxItems must be at least 1", true};
  if (auto r = flush(); !r) return r.takeError();
  Impl& m = *impl_;
  const std::uint64_t M = maxItems;
  Timeline out;
  out.window = {s, e};
  out.maxItems = maxItems;

  std::vector<const TrackState*> active;
  for (const TrackState& t : m.tracks) {
    if (t.start != 0 && t.start < e && t.end > s) active.push_back(&t);
  }
  const std::uint64_t lookFrom = s > lod::kLongNs ? s - lod::kLongNs : 0;

  // Records of `t` lasting kLongNs or more that start before `before` and overlap s.
  auto longStraddlers = [&](const TrackState& t, std::uint64_t before, auto&& emit) -> Result<void> {
    for (int dc = lod::kLongShift + 1; dc < 64; ++dc) {
      if (!(t.longClasses >> dc & 1)) continue;
      std::uint64_t span = std::uint64_t{1} << dc;
      auto& q = m.st.selLongRange;
      q.bind(1, t.info.id).bind(2, dc).bindU(3, s > span ? s - span : 0).bindU(4, before).bindU(5, s);
      int rc;
      while ((rc = q.step()) == SQLITE_ROW) emit(q.u64(0), q.u64(1), q.u64(2), static_cast<std::uint8_t>(q.i64(3)), static_cast<std::uint32_t>(q.i64(4)));
      q.reset();
      if (rc != SQLITE_DONE) return Error{kIo, m.path + ": reading long_records: " + m.db.message(), true};
    }
    return {};
  };

  // Every cell of `level` that covers part of the window; false when more than `limit`.
  auto readLevel = [&](int level, std::size_t limit, std::vector<Cell>& cells) -> Result<bool> {
    cells.clear();
    int sh = lod::shift(level);
    std::vector<lod::Entry> es;
    for (const TrackState* t : active) {
      es.clear();
      std::uint64_t lookBucket = lookFrom >> sh, first = s >> sh, last = (e - 1) >> sh;
      if (first > lookBucket) {
        // Records that started before the window and still run at its start.
        auto r1 = m.readEntries(*t, level, lookBucket, first - 1, SIZE_MAX, es);
        if (!r1) return r1.takeError();
        std::erase_if(es, [&](const lod::Entry& x) { return x.maxEnd <= s; });
      }
      auto r2 = m.readEntries(*t, level, first, last, limit, es);
      if (!r2) return r2.takeError();
      auto rl = longStraddlers(*t, lookBucket << sh, [&](std::uint64_t id, std::uint64_t st, std::uint64_t en, std::uint8_t kind, std::uint32_t name) {
        lod::Entry x{.bucket = st >> sh};
        lod::add(x, st, en, id, name, kind);
        es.push_back(x);
      });
      if (!rl) return rl.takeError();
      std::sort(es.begin(), es.end(), [](auto& a, auto& b) { return a.bucket < b.bucket; });
      for (auto& x : es) cells.push_back(Cell{t->info.id, x});
      if (cells.size() > limit) return false;
    }
    return true;
  };

  // The records themselves (when the window holds at most maxItems of them).
  auto readRaw = [&](const std::vector<Cell>& cells, int level, std::size_t limit, std::vector<TimelineItem>& items) -> Result<bool> {
    items.clear();
    std::uint64_t lookStart = (lookFrom >> lod::shift(level)) << lod::shift(level);
    std::vector<GpuRecord> recs;
    std::size_t ci = 0;
    for (const TrackState* t : active) {
      // The earliest start among cells still running at s bounds the chunks to read.
      std::uint64_t lo = s;
      for (; ci < cells.size() && cells[ci].track < t->info.id; ++ci) {}
      for (std::size_t k = ci; k < cells.size() && cells[k].track == t->info.id; ++k) {
        if (cells[k].e.minStart < lo && cells[k].e.maxEnd > s) lo = std::min(lo, std::max(cells[k].e.minStart, lookStart));
      }
      auto& q = m.st.selChunksInRange;
      q.bind(1, t->info.id).bindU(2, lo > lod::kLongNs ? lo - lod::kLongNs : 0).bindU(3, e);
      int rc;
      bool bad = false;
      while ((rc = q.step()) == SQLITE_ROW) {
        if (q.u64(2) <= s && q.u64(1) < s) continue;  // the chunk ends before the window
        std::uint64_t chunk = q.u64(0);
        if (!codec::decode(q.blob(4), codec::kTimeColumns, recs)) {
          bad = true;
          break;
        }
        for (std::uint32_t i = 0; i < recs.size(); ++i) {
          const GpuRecord& r = recs[i];
          if (!isTimed(r) || r.start >= e) continue;
          std::uint64_t en = effectiveEnd(r);
          if (en <= s && !(r.start >= s)) continue;
          if (r.start < lookStart && en - r.start >= lod::kLongNs) continue;  // from long_records below
          items.push_back(TimelineItem{.track = t->info.id, .startNs = r.start, .endNs = en, .count = 1,
                                       .busyNs = en - r.start, .id = codec::recordId(chunk, i), .kind = r.kind,
                                       .nameId = r.name});
          if (items.size() > limit) break;
        }
        if (items.size() > limit) break;
      }
      q.reset();
      if (bad) return Error{kNotAStore, m.path + ": a malformed chunk on track " + std::to_string(t->info.id), true};
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error{kIo, m.path + ": reading chunks: " + m.db.message(), true};
      auto rl = longStraddlers(*t, lookStart, [&](std::uint64_t id, std::uint64_t st, std::uint64_t en, std::uint8_t kind, std::uint32_t name) {
        items.push_back(TimelineItem{.track = t->info.id, .startNs = st, .endNs = en, .count = 1, .busyNs = en - st,
                                     .id = id, .kind = static_cast<RecordKind>(kind), .nameId = name});
      });
      if (!rl) return rl.takeError();
      if (items.size() > limit) return false;
    }
    return true;
  };

  // Finer than the finest stored level: the records themselves grouped by the narrowest
  // power-of-two width that fits. Records come by track, then start.
  auto bucketRaw = [&](std::vector<TimelineItem>& recs, std::uint64_t widest) -> bool {
    std::sort(recs.begin(), recs.end(), [](auto& a, auto& b) { return a.track != b.track ? a.track < b.track : a.startNs < b.startNs; });
    for (int sh = 10; (std::uint64_t{1} << sh) < widest; ++sh) {
      std::size_t n = 0;
      for (std::size_t i = 0; i < recs.size() && n <= M; ++i) {
        n += i == 0 || recs[i].track != recs[i - 1].track || (recs[i].startNs >> sh) != (recs[i - 1].startNs >> sh);
      }
      if (n > M) continue;
      std::vector<Cell> cells;
      for (const TimelineItem& r : recs) {
        std::uint64_t b = r.startNs >> sh;
        if (cells.empty() || cells.back().track != r.track || cells.back().e.bucket != b) cells.push_back(Cell{r.track, lod::Entry{.bucket = b}});
        lod::add(cells.back().e, r.startNs, r.endNs, r.id, r.nameId, static_cast<std::uint8_t>(r.kind));
      }
      out.level = 0;
      out.bucketNs = std::uint64_t{1} << sh;
      for (const Cell& c : cells) {
        out.items.push_back(TimelineItem{.track = c.track, .startNs = c.e.minStart, .endNs = c.e.maxEnd, .count = c.e.count,
                                         .busyNs = c.e.busy, .id = c.e.topId, .kind = static_cast<RecordKind>(c.e.topKind),
                                         .nameId = c.e.topName});
      }
      return true;
    }
    return false;
  };

  auto finish = [&](Timeline& tl) {
    std::sort(tl.items.begin(), tl.items.end(), [](auto& a, auto& b) {
      return a.track != b.track ? a.track < b.track : a.startNs != b.startNs ? a.startNs < b.startNs : a.endNs > b.endNs;
    });
    for (auto& it : tl.items) it.name = m.nameText(it.nameId);
    std::uint32_t lastTrack = 0;
    for (auto& it : tl.items) {
      if (it.track == lastTrack) continue;
      lastTrack = it.track;
      tl.tracks.push_back(m.tracks[it.track - 1].info);
    }
  };

  auto fromCells = [&](const std::vector<Cell>& cells, int level, std::uint64_t bucketNs) {
    out.level = level + 1;  // 0 is the in-memory grouping of records (bucketRaw)
    out.bucketNs = bucketNs;
    for (const Cell& c : cells) {
      out.items.push_back(TimelineItem{.track = c.track, .startNs = c.e.minStart, .endNs = c.e.maxEnd, .count = c.e.count,
                                       .busyNs = c.e.busy, .id = c.e.topId, .kind = static_cast<RecordKind>(c.e.topKind),
                                       .nameId = c.e.topName});
    }
  };

  if (active.empty()) return out;

  // The finest level whose worst case (every bucket of every active track filled) fits.
  int level = lod::kLevels - 1;
  for (int l = 0; l < lod::kLevels; ++l) {
    int sh = lod::shift(l);
    std::uint64_t perTrack = ((e - 1) >> sh) - (s >> sh) + 1 + ((s >> sh) - (lookFrom >> sh));
    if (perTrack * active.size() <= M) {
      level = l;
      break;
    }
  }
  std::vector<Cell> cells, finer;
  std::vector<TimelineItem> raw;
  for (;;) {
    // The coarsest level is read whole: its buckets are merged further below.
    auto fit = readLevel(level, level == lod::kLevels - 1 ? SIZE_MAX : M, cells);
    if (!fit) return fit.takeError();
    if (*fit || level == lod::kLevels - 1) break;
    ++level;
  }
  if (cells.size() > M) {
    // Wider than the coarsest level holds: merge its buckets further, then whole tracks.
    int by = 1;
    auto merged = coarsen(cells, by);
    while (merged.size() > M && by < 64) merged = coarsen(cells, by = std::min(64, by * 2));
    if (merged.size() > M) {
      out.tracksOmitted = merged.size() - M;
      merged.resize(M);
    }
    fromCells(merged, level, lod::shift(level) + by >= 63 ? e - s : lod::width(level) << by);
    finish(out);
    return out;
  }
  std::uint64_t bucketNs = lod::width(level);
  // Windows holding this many records or fewer are answered from the records themselves.
  const std::uint64_t rawLimit = std::max<std::uint64_t>(M, std::min<std::uint64_t>(M * 64, kMaxRawRecords));
  bool coarsened = false;  // cells are a level's buckets merged further
  for (;;) {
    // The records themselves when they fit; grouped finer than level 0 when its buckets fit.
    std::uint64_t sum = sumCounts(cells);
    bool finerThanStored = level == 0 && !coarsened && sum <= rawLimit;
    if (sum <= M || finerThanStored) {
      auto r = readRaw(cells, level, sum <= M ? M : rawLimit, raw);
      if (!r) return r.takeError();
      if (*r && raw.size() <= M) {
        out.level = -1;
        out.bucketNs = 0;
        out.items = std::move(raw);
        finish(out);
        return out;
      }
      if (*r && finerThanStored && bucketRaw(raw, bucketNs)) {
        finish(out);
        return out;
      }
    }
    if (level == 0) break;
    auto fit = readLevel(level - 1, (M + 1) * 8 + active.size() * 4, finer);
    if (!fit) return fit.takeError();
    if (!*fit) break;
    if (finer.size() <= M) {
      cells.swap(finer);
      --level;
      bucketNs = lod::width(level);
      continue;
    }
    // Between two levels: the finer one, neighbours merged by 2 or 4.
    for (int by = 1; by <= 2; ++by) {
      auto merged = coarsen(finer, by);
      if (merged.size() <= M) {
        cells.swap(merged);
        bucketNs = lod::width(level - 1) << by;
        --level;
        coarsened = true;
        break;
      }
    }
    break;
  }
  fromCells(cells, level, bucketNs);
  finish(out);
  return out;
}

}  // namespace strata::cuda
