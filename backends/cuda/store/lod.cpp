// The page format of the level-of-detail summaries: varints relative to each bucket's start.
#include "lod.hpp"

#include "chunk_codec.hpp"

namespace strata::cuda::lod {

using codec::getVarint;
using codec::putVarint;

// Per entry: bucket offset, count, start offset in the bucket, span, top id (delta from the
// previous entry's), top name, top kind; then busy and top duration when count > 1 (for one
// record both equal the span).
void encodePage(int level, std::uint64_t page, const std::vector<Entry>& entries, std::string& out) {
  putVarint(out, entries.size());
  std::size_t at = out.size();
  out.resize(at + entries.size() * 90);
  char* p = out.data() + at;
  auto put = [&p](std::uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
  };
  std::uint64_t first = page << kPageShift, prevId = 0;
  for (const Entry& e : entries) {
    put(e.bucket - first);
    put(e.count);
    put(e.minStart - (e.bucket << shift(level)));
    put(e.maxEnd - e.minStart);
    put(codec::zigzag(static_cast<std::int64_t>(e.topId - prevId)));
    prevId = e.topId;
    put(e.topName);
    put(e.topKind);
    if (e.count > 1) {
      put(e.busy);
      put(e.topDuration);
    }
  }
  out.resize(static_cast<std::size_t>(p - out.data()));
}

bool decodePage(std::string_view blob, int level, std::uint64_t page, std::vector<Entry>& out) {
  const char* p = blob.data();
  const char* end = p + blob.size();
  std::uint64_t n = 0;
  if (!getVarint(p, end, n) || n > (std::uint64_t{1} << kPageShift)) return false;
  std::uint64_t first = page << kPageShift, prevId = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t v[7];
    for (auto& x : v) {
      if (!getVarint(p, end, x)) return false;
    }
    Entry e;
    e.bucket = first + v[0];
    e.count = v[1];
    e.minStart = (e.bucket << shift(level)) + v[2];
    e.maxEnd = e.minStart + v[3];
    e.topId = prevId + static_cast<std::uint64_t>(codec::unzigzag(v[4]));
    prevId = e.topId;
    e.topName = static_cast<std::uint32_t>(v[5]);
    e.topKind = static_cast<std::uint8_t>(v[6]);
    if (e.count > 1) {
      if (!getVarint(p, end, e.busy) || !getVarint(p, end, e.topDuration)) return false;
    } else {
      e.busy = e.topDuration = v[3];
    }
    out.push_back(e);
  }
  return true;
}

}  // namespace strata::cuda::lod
