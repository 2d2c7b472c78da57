// gpuTimeline: never more than maxItems at any zoom; single records where they fit, exactly the
// ones overlapping the window; merged items that account for every record they stand for.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "helpers.hpp"
#include "strata/cuda/store_json.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;

namespace {

struct Generated {
  std::vector<GpuRecord> records;
  std::uint64_t start = 0, end = 0;
};

// Three streams of kernels (dense, sparse, bursty) and one CPU thread of API calls, with a
// few long records (longer than the store's long-record threshold) and an instant.
Generated generate(Store& store) {
  Generated g;
  std::uint32_t a = store.internName("dense"), b = store.internName("sparse"), c = store.internName("burst"),
                api = store.internName("cudaLaunchKernel"), longK = store.internName("long");
  std::uint64_t t0 = 1'700'000'000'000'000'000ull;
  std::uint64_t t = t0;
  for (int i = 0; i < 40000; ++i) {  // 2 µs kernels every 5 µs for 200 ms
    g.records.push_back(kernelRecord(t, t + 2000, a, 7));
    g.records.push_back(apiRecord(t > 1500 ? t - 1500 : t, t - 200, api, 100, 101, static_cast<std::uint32_t>(i + 1)));
    t += 5000;
  }
  for (std::uint64_t x = t0; x < t; x += 3'000'000) g.records.push_back(kernelRecord(x + 17, x + 250'017, b, 8));
  for (int burst = 0; burst < 20; ++burst) {
    std::uint64_t bt = t0 + static_cast<std::uint64_t>(burst) * 10'000'000 + 123'456;
    for (int i = 0; i < 500; ++i) g.records.push_back(kernelRecord(bt + static_cast<std::uint64_t>(i) * 1000, bt + static_cast<std::uint64_t>(i) * 1000 + 900, c, 9));
  }
  // Long ones: 40 ms and 120 ms on a stream of their own, and one on the dense stream's device.
  g.records.push_back(kernelRecord(t0 + 10'000'000, t0 + 50'000'000, longK, 10));
  g.records.push_back(kernelRecord(t0 + 60'000'000, t0 + 180'000'000, longK, 10));
  g.records.push_back(kernelRecord(t0 + 100'000'000, t0 + 100'000'000, longK, 10));  // an instant
  g.start = t0 - 1500;
  g.end = t0 + 250'000'000;
  // CUPTI hands buffers over out of order: shuffle within blocks of 4096.
  for (std::size_t i = 0; i + 4096 <= g.records.size(); i += 4096) std::reverse(g.records.begin() + static_cast<std::ptrdiff_t>(i), g.records.begin() + static_cast<std::ptrdiff_t>(i) + 2048);
  REQUIRE(store.ingest(g.records).ok());
  return g;
}

bool overlaps(const GpuRecord& r, std::uint64_t s, std::uint64_t e) {
  std::uint64_t en = std::max(r.end, r.start);
  return r.start < e && (en > s || r.start >= s);
}

using Key = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>;  // stream/tid, start, end

std::string trackName(const GpuRecord& r) {
  if (r.kind == RecordKind::RuntimeApi) return "thread " + std::to_string(r.tid) + " (pid " + std::to_string(r.pid) + ")";
  return "GPU " + std::to_string(r.device) + " stream " + std::to_string(r.stream);
}

Key keyOf(const GpuRecord& r) {
  return {r.kind == RecordKind::RuntimeApi ? 1000 + r.tid : r.stream, r.start, std::max(r.end, r.start)};
}

}  // namespace

TEST_CASE("every zoom from the whole span to 1 µs answers at most maxItems, accounting for every record") {
  TempDir dir;
  auto store = newStore(dir);
  Generated g = generate(*store);
  std::map<std::uint32_t, Track> tracks;
  for (std::uint32_t maxItems : {50u, 500u, 2000u}) {
    for (std::uint64_t w = g.end - g.start;; w = std::max<std::uint64_t>(1000, w / 7)) {
      for (int pos = 0; pos < 5; ++pos) {
        std::uint64_t s = g.start + (g.end - g.start - std::min(w, g.end - g.start)) / 4 * static_cast<std::uint64_t>(pos);
        std::uint64_t e = s + w;
        auto tl = store->timeline(s, e, maxItems);
        REQUIRE(tl.ok());
        INFO("window ", s - g.start, " + ", w, " maxItems ", maxItems, " level ", tl->level);
        REQUIRE(tl->items.size() <= maxItems);
        std::map<std::uint32_t, std::string> trackKey;
        for (const Track& t : tl->tracks) trackKey[t.id] = t.name;
        std::multiset<Key> expected;
        for (const GpuRecord& r : g.records) {
          if (overlaps(r, s, e)) expected.insert(keyOf(r));
        }
        std::uint64_t counted = 0;
        for (const TimelineItem& it : tl->items) {
          REQUIRE(trackKey.count(it.track));
          CHECK(it.count >= 1);
          CHECK(it.startNs <= it.endNs);
          CHECK(it.busyNs <= (it.count == 1 ? it.endNs - it.startNs : UINT64_MAX));
          counted += it.count;
        }
        if (tl->level == -1) {
          // Single records: exactly the ones overlapping the window.
          CHECK(tl->bucketNs == 0);
          CHECK(counted == expected.size());
          CHECK(tl->items.size() == expected.size());
        } else {
          // Merged: every overlapping record is inside an item of its track; no item stands for
          // more records than its track has in the buckets it covers.
          CHECK(counted >= expected.size());
          CHECK(tl->bucketNs > 0);
          std::map<std::string, std::vector<const TimelineItem*>> byTrack;
          for (const TimelineItem& it : tl->items) byTrack[trackKey[it.track]].push_back(&it);
          std::size_t uncovered = 0;
          for (const GpuRecord& r : g.records) {
            if (!overlaps(r, s, e)) continue;
            auto& items = byTrack[trackName(r)];
            auto at = std::upper_bound(items.begin(), items.end(), r.start, [](std::uint64_t v, const TimelineItem* it) { return v < it->startNs; });
            bool inside = false;
            for (auto k = at; k != items.begin() && !inside;) {
              --k;
              inside = (*k)->endNs >= std::max(r.end, r.start);
            }
            uncovered += !inside;
          }
          CHECK(uncovered == 0);
        }
        if (w == g.end - g.start && pos == 0) {
          CHECK(counted == g.records.size());  // the whole span: every record, once
        }
      }
      if (w == 1000) break;
    }
  }
}

TEST_CASE("a window inside a long record shows it; records ending before the window do not appear") {
  TempDir dir;
  auto store = newStore(dir);
  Generated g = generate(*store);
  std::uint64_t t0 = 1'700'000'000'000'000'000ull;
  // 1 µs inside the 120 ms record, where the dense stream also runs.
  auto tl = store->timeline(t0 + 150'000'000, t0 + 150'001'000, 100);
  REQUIRE(tl.ok());
  CHECK(tl->level == -1);
  bool sawLong = false;
  for (auto& it : tl->items) {
    CHECK(it.endNs > t0 + 150'000'000);
    if (it.name == "long") {
      sawLong = true;
      CHECK(it.startNs == t0 + 60'000'000);
      CHECK(it.endNs == t0 + 180'000'000);
      auto d = store->kernel(it.id);
      REQUIRE(d.ok());
      CHECK(d->durationNs == 120'000'000);
    }
  }
  CHECK(sawLong);
  // Merged zoom: the long record still appears in the window it spans.
  auto wide = store->timeline(t0 + 150'000'000, t0 + 160'000'000, 20);
  REQUIRE(wide.ok());
  CHECK(wide->items.size() <= 20);
  bool covered = false;
  for (auto& it : wide->items) {
    if (it.startNs <= t0 + 60'000'000 && it.endNs >= t0 + 180'000'000) covered = true;
  }
  CHECK(covered);
}

TEST_CASE("merged items add up to the records of the whole span, per track") {
  TempDir dir;
  auto store = newStore(dir);
  Generated g = generate(*store);
  std::map<std::string, std::uint64_t> perTrack;
  auto tl = store->timeline(g.start, g.end, 64);
  REQUIRE(tl.ok());
  CHECK(tl->level >= 0);
  CHECK(tl->items.size() <= 64);
  std::map<std::uint32_t, std::string> names;
  for (auto& t : tl->tracks) names[t.id] = t.name;
  for (auto& it : tl->items) perTrack[names[it.track]] += it.count;
  CHECK(perTrack["GPU 0 stream 7"] == 40000);
  CHECK(perTrack["GPU 0 stream 9"] == 10000);
  CHECK(perTrack["GPU 0 stream 10"] == 3);
  CHECK(perTrack["thread 101 (pid 100)"] == 40000);
  // Tracks in the reply are the ones with items, each named once.
  CHECK(tl->tracks.size() == 5);
  auto j = toJson(*tl);
  CHECK(j.at("merged").as_bool());
  CHECK(j.at("items").as_array().size() == tl->items.size());
}

TEST_CASE("fewer items allowed than tracks with data: whole tracks are left out and counted") {
  TempDir dir;
  auto store = newStore(dir);
  Generated g = generate(*store);
  auto tl = store->timeline(g.start, g.end, 2);
  REQUIRE(tl.ok());
  CHECK(tl->items.size() == 2);
  CHECK(tl->tracksOmitted == 3);
}

TEST_CASE("bad windows are refused with the reason") {
  TempDir dir;
  auto store = newStore(dir);
  auto r = store->timeline(100, 100, 10);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == store_errors::kBadArgument);
  CHECK(r.error().message.find("endNs") != std::string::npos);
  auto z = store->timeline(100, 200, 0);
  REQUIRE_FALSE(z.ok());
  CHECK(z.error().message.find("maxItems") != std::string::npos);
  auto empty = store->timeline(100, 200, 10);
  REQUIRE(empty.ok());
  CHECK(empty->items.empty());
}

TEST_CASE("tight memory bounds (buffers written early, pages evicted) answer exactly the same") {
  TempDir dir;
  auto roomy = newStore(dir, "roomy.strata");
  auto s = Store::create(dir.file("tight.strata"), StoreOptions{.maxBufferedRecords = 64, .maxOpenLodEntries = 40});
  REQUIRE(s.ok());
  auto& tight = *s;
  Generated g = generate(*roomy);
  // The same names in the same order give the same ids.
  for (const char* n : {"dense", "sparse", "burst", "cudaLaunchKernel", "long"}) tight->internName(n);
  // Handed over in small pieces, as the collector would.
  for (std::size_t i = 0; i < g.records.size(); i += 1000) {
    std::span<const GpuRecord> piece(g.records.data() + i, std::min<std::size_t>(1000, g.records.size() - i));
    REQUIRE(tight->ingest(piece).ok());
  }
  auto a = roomy->summary(10), b = tight->summary(10);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(toJson(*a) == toJson(*b));
  using Item = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::string>;
  auto items = [](const Timeline& t) {
    std::vector<Item> out;
    for (auto& i : t.items) out.emplace_back(i.track, i.startNs, i.endNs, i.count, i.busyNs, i.name);
    std::sort(out.begin(), out.end());
    return out;
  };
  for (std::uint64_t w : {g.end - g.start, std::uint64_t{40'000'000}, std::uint64_t{3'000'000}, std::uint64_t{200'000}}) {
    std::uint64_t st = g.start + (g.end - g.start - w) / 3;
    auto x = roomy->timeline(st, st + w, 300), y = tight->timeline(st, st + w, 300);
    REQUIRE(x.ok());
    REQUIRE(y.ok());
    INFO("window ", w);
    CHECK(x->level == y->level);
    CHECK(items(*x) == items(*y));
  }
}
