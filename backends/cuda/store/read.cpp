// Reading what ingestion wrote: one chunk's records, one track's level-of-detail entries.
#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

Result<void> Store::Impl::readChunk(std::int64_t chunkId, codec::ColumnMask mask, std::vector<GpuRecord>& out,
                                    std::uint32_t* track) {
  st.selChunk.bind(1, chunkId);
  int rc = st.selChunk.step();
  if (rc != SQLITE_ROW) {
    st.selChunk.reset();
    if (rc == SQLITE_DONE) return Error{kNotFound, "no chunk " + std::to_string(chunkId), true};
    return Error{kIo, path + ": reading chunk " + std::to_string(chunkId) + ": " + db.message(), true};
  }
  if (track) *track = static_cast<std::uint32_t>(st.selChunk.i64(0));
  bool ok = codec::decode(st.selChunk.blob(1), mask, out);
  st.selChunk.reset();
  if (!ok) return Error{kNotAStore, path + ": chunk " + std::to_string(chunkId) + " is malformed", true};
  return {};
}

Result<bool> Store::Impl::readEntries(const TrackState& t, int level, std::uint64_t lo, std::uint64_t hi,
                                      std::size_t limit, std::vector<lod::Entry>& out) {
  if (hi < lo) return true;
  auto& s = st.selLodRange;
  s.bind(1, t.info.id).bind(2, level).bindU(3, lo >> lod::kPageShift).bindU(4, hi >> lod::kPageShift);
  std::vector<lod::Entry> page;
  bool fits = true;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    page.clear();
    if (!lod::decodePage(s.blob(1), level, s.u64(0), page)) {
      s.reset();
      return Error{kNotAStore, path + ": a malformed lod page (track " + std::to_string(t.info.id) + ")", true};
    }
    for (const lod::Entry& e : page) {
      if (e.bucket < lo || e.bucket > hi) continue;
      out.push_back(e);
    }
    if (out.size() > limit) {
      fits = false;
      break;
    }
  }
  bool failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
  s.reset();
  if (failed) return Error{kIo, path + ": reading lod: " + db.message(), true};
  return fits;
}

}  // namespace strata::cuda
