// Level-of-detail summaries of each track: per level, buckets of a fixed power-of-two width
// holding how many records start there, the time they cover, their busy time and the longest
// of them; stored 256 buckets to a page. The timeline picks the finest level that fits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::cuda::lod {

// Finer than level 0, a query groups the records themselves (at most a few ms of them).
inline constexpr int kLevels = 10;
inline constexpr int kBaseShift = 16;  // level 0: 2^16 ns = 65.5 µs buckets
inline constexpr int kLevelStep = 3;   // each level 8 times wider; level 9: 2^43 ns ≈ 2.4 h
inline constexpr int kPageShift = 8;   // 256 buckets per stored page
inline constexpr int shift(int level) { return kBaseShift + kLevelStep * level; }
inline constexpr std::uint64_t width(int level) { return std::uint64_t{1} << shift(level); }

// Records that last at least this long are also indexed in long_records, and no chunk's
// starts spread over more than this: a record overlapping time t starts after
// t - kLongNs, or is in long_records (see the README).
inline constexpr int kLongShift = 22;
inline constexpr std::uint64_t kLongNs = std::uint64_t{1} << kLongShift;  // ≈ 4.2 ms

struct Entry {
  std::uint64_t bucket = 0;  // index at its level: start >> shift(level)
  std::uint64_t count = 0;
  std::uint64_t minStart = 0, maxEnd = 0, busy = 0;
  std::uint64_t topId = 0, topDuration = 0;  // the longest record starting in the bucket
  std::uint32_t topName = 0;
  std::uint8_t topKind = 0;
};

inline void add(Entry& e, std::uint64_t start, std::uint64_t end, std::uint64_t id,
                std::uint32_t name, std::uint8_t kind) {
  std::uint64_t d = end - start;
  if (e.count == 0) {
    e.minStart = start;
    e.maxEnd = end;
  } else {
    if (start < e.minStart) e.minStart = start;
    if (end > e.maxEnd) e.maxEnd = end;
  }
  e.busy += d;
  if (e.count == 0 || d > e.topDuration) {
    e.topDuration = d;
    e.topId = id;
    e.topName = name;
    e.topKind = kind;
  }
  ++e.count;
}

inline void merge(Entry& into, const Entry& from) {
  if (from.count == 0) return;
  if (into.count == 0) {
    std::uint64_t b = into.bucket;
    into = from;
    into.bucket = b;
    return;
  }
  if (from.minStart < into.minStart) into.minStart = from.minStart;
  if (from.maxEnd > into.maxEnd) into.maxEnd = from.maxEnd;
  into.busy += from.busy;
  if (from.topDuration > into.topDuration) {
    into.topDuration = from.topDuration;
    into.topId = from.topId;
    into.topName = from.topName;
    into.topKind = from.topKind;
  }
  into.count += from.count;
}

// `entries` sorted by bucket, all inside `page` at `level`.
void encodePage(int level, std::uint64_t page, const std::vector<Entry>& entries, std::string& out);
// Appends the page's entries; false on a malformed blob.
bool decodePage(std::string_view blob, int level, std::uint64_t page, std::vector<Entry>& out);

}  // namespace strata::cuda::lod
