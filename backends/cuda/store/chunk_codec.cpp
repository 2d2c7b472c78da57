// The chunk format (see chunk_codec.hpp and the store README): header, column directory, columns.
#include "chunk_codec.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace strata::cuda::codec {
namespace {

constexpr std::uint8_t kVersion = 1;
enum Mode : std::uint8_t { kConst = 0, kPlain = 1, kDelta = 2 };

// Columns whose consecutive values (records sorted by start) tend to be close.
constexpr bool deltaColumn(Column c) {
  return c == kStart || c == kCorrelation || c == kExternalId || c == kGraphNodeId;
}

inline void set(GpuRecord& r, Column c, std::uint64_t v) {
  switch (c) {
    case kKind: r.kind = static_cast<RecordKind>(v); break;
    case kCopyKind: r.copyKind = static_cast<std::uint8_t>(v); break;
    case kSrcKind: r.srcKind = static_cast<std::uint8_t>(v); break;
    case kDstKind: r.dstKind = static_cast<std::uint8_t>(v); break;
    case kPid: r.pid = static_cast<std::uint32_t>(v); break;
    case kTid: r.tid = static_cast<std::uint32_t>(v); break;
    case kDevice: r.device = static_cast<std::uint32_t>(v); break;
    case kContext: r.context = static_cast<std::uint32_t>(v); break;
    case kStream: r.stream = static_cast<std::uint32_t>(v); break;
    case kCorrelation: r.correlation = static_cast<std::uint32_t>(v); break;
    case kName: r.name = static_cast<std::uint32_t>(v); break;
    case kSite: r.site = static_cast<std::uint32_t>(v); break;
    case kResult: r.result = static_cast<std::int32_t>(static_cast<std::int64_t>(v)); break;
    case kStart: r.start = v; break;
    case kDuration: r.end = r.start + v; break;
    case kExternalId: r.externalId = v; break;
    case kBytes: r.bytes = v; break;
    case kGraphId: r.graphId = v; break;
    case kGraphNodeId: r.graphNodeId = v; break;
    case kGridX: r.grid[0] = static_cast<std::int32_t>(static_cast<std::int64_t>(v)); break;
    case kGridY: r.grid[1] = static_cast<std::int32_t>(static_cast<std::int64_t>(v)); break;
    case kGridZ: r.grid[2] = static_cast<std::int32_t>(static_cast<std::int64_t>(v)); break;
    case kBlockX: r.block[0] = static_cast<std::int32_t>(static_cast<std::int64_t>(v)); break;
    case kBlockY: r.block[1] = static_cast<std::int32_t>(static_cast<std::int64_t>(v)); break;
    case kBlockZ: r.block[2] = static_cast<std::int32_t>(static_cast<std::int64_t>(v)); break;
    case kRegisters: r.registersPerThread = static_cast<std::uint32_t>(v); break;
    case kStaticShared: r.staticSharedMemory = static_cast<std::uint32_t>(v); break;
    case kDynamicShared: r.dynamicSharedMemory = static_cast<std::uint32_t>(v); break;
    case kReserved: r.reserved = static_cast<std::uint32_t>(v); break;
    case kColumnCount: break;
  }
}

// Where each column's field lives in a GpuRecord (the duration is computed).
struct Field {
  std::size_t offset;
  std::uint8_t size;
  bool isSigned;
};
#define STRATA_FIELD(member) Field{offsetof(GpuRecord, member), sizeof(GpuRecord::member), std::is_signed_v<decltype(GpuRecord::member)>}
#define STRATA_ELEMENT(member, i) Field{offsetof(GpuRecord, member) + (i) * sizeof(std::int32_t), 4, true}
const std::array<Field, kColumnCount> kFields = {
    Field{offsetof(GpuRecord, kind), 1, false}, STRATA_FIELD(copyKind), STRATA_FIELD(srcKind), STRATA_FIELD(dstKind),
    STRATA_FIELD(pid), STRATA_FIELD(tid), STRATA_FIELD(device), STRATA_FIELD(context), STRATA_FIELD(stream),
    STRATA_FIELD(correlation), STRATA_FIELD(name), STRATA_FIELD(site), STRATA_FIELD(result), STRATA_FIELD(start),
    Field{0, 0, false} /* duration */, STRATA_FIELD(externalId), STRATA_FIELD(bytes), STRATA_FIELD(graphId),
    STRATA_FIELD(graphNodeId), STRATA_ELEMENT(grid, 0), STRATA_ELEMENT(grid, 1), STRATA_ELEMENT(grid, 2),
    STRATA_ELEMENT(block, 0), STRATA_ELEMENT(block, 1), STRATA_ELEMENT(block, 2), STRATA_FIELD(registersPerThread),
    STRATA_FIELD(staticSharedMemory), STRATA_FIELD(dynamicSharedMemory), STRATA_FIELD(reserved)};
#undef STRATA_FIELD
#undef STRATA_ELEMENT

template <class T>
void gather(const GpuRecord* records, std::size_t count, std::size_t offset, std::uint64_t* out) {
  for (std::size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, reinterpret_cast<const char*>(records + i) + offset, sizeof v);
    if constexpr (std::is_signed_v<T>) out[i] = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    else out[i] = v;
  }
}

void gatherColumn(const GpuRecord* records, std::size_t count, Column c, std::uint64_t* out) {
  if (c == kDuration) {
    for (std::size_t i = 0; i < count; ++i) out[i] = records[i].end - records[i].start;
    return;
  }
  const Field& f = kFields[c];
  switch (f.size) {
    case 1: gather<std::uint8_t>(records, count, f.offset, out); break;
    case 4:
      if (f.isSigned) gather<std::int32_t>(records, count, f.offset, out);
      else gather<std::uint32_t>(records, count, f.offset, out);
      break;
    default: gather<std::uint64_t>(records, count, f.offset, out); break;
  }
}

inline char* writeVarint(char* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

}  // namespace

void encode(const GpuRecord* records, std::size_t count, std::string& out) {
  std::array<std::uint8_t, kColumnCount> mode{};
  std::array<std::size_t, kColumnCount> length{};
  // Scratch kept between calls: encoding is on the ingestion path.
  thread_local std::vector<std::uint64_t> values;
  thread_local std::string data;
  values.resize(count ? count : 1);
  std::size_t need = static_cast<std::size_t>(kColumnCount) * (count * 10 + 10);
  if (data.size() < need) data.resize(need);
  char* p = data.data();
  for (std::uint32_t ci = 0; ci < kColumnCount; ++ci) {
    auto c = static_cast<Column>(ci);
    char* begin = p;
    if (count) gatherColumn(records, count, c, values.data());
    else values[0] = 0;
    bool constant = true;
    for (std::size_t i = 1; i < count && constant; ++i) constant = values[i] == values[0];
    if (count == 0 || constant) {
      mode[ci] = kConst;
      p = writeVarint(p, zigzag(static_cast<std::int64_t>(values[0])));
    } else if (deltaColumn(c)) {
      mode[ci] = kDelta;
      std::uint64_t prev = 0;
      for (std::size_t i = 0; i < count; ++i) {
        p = writeVarint(p, zigzag(static_cast<std::int64_t>(values[i] - prev)));
        prev = values[i];
      }
    } else {
      mode[ci] = kPlain;
      for (std::size_t i = 0; i < count; ++i) p = writeVarint(p, zigzag(static_cast<std::int64_t>(values[i])));
    }
    length[ci] = static_cast<std::size_t>(p - begin);
  }
  out.push_back(static_cast<char>(kVersion));
  putVarint(out, count);
  for (std::uint32_t ci = 0; ci < kColumnCount; ++ci) {
    out.push_back(static_cast<char>(mode[ci]));
    putVarint(out, length[ci]);
  }
  out.append(data.data(), static_cast<std::size_t>(p - data.data()));
}

bool decode(std::string_view blob, ColumnMask mask, std::vector<GpuRecord>& out) {
  const char* p = blob.data();
  const char* end = p + blob.size();
  if (p == end || static_cast<std::uint8_t>(*p++) != kVersion) return false;
  std::uint64_t count = 0;
  if (!getVarint(p, end, count) || count > kChunkCapacity) return false;
  std::array<std::uint8_t, kColumnCount> mode{};
  std::array<std::uint64_t, kColumnCount> length{};
  for (std::uint32_t ci = 0; ci < kColumnCount; ++ci) {
    if (p == end) return false;
    mode[ci] = static_cast<std::uint8_t>(*p++);
    if (!getVarint(p, end, length[ci]) || mode[ci] > kDelta) return false;
  }
  out.assign(count, GpuRecord{});
  if (mask & bit(kDuration)) mask |= bit(kStart);
  for (std::uint32_t ci = 0; ci < kColumnCount; ++ci) {
    if (length[ci] > static_cast<std::uint64_t>(end - p)) return false;
    const char* q = p;
    const char* colEnd = p + length[ci];
    p = colEnd;
    if (!(mask & (ColumnMask{1} << ci))) continue;
    auto c = static_cast<Column>(ci);
    std::uint64_t v = 0;
    if (mode[ci] == kConst) {
      if (!getVarint(q, colEnd, v)) return false;
      v = static_cast<std::uint64_t>(unzigzag(v));
      for (auto& r : out) set(r, c, v);
      continue;
    }
    std::uint64_t prev = 0;
    for (auto& r : out) {
      if (!getVarint(q, colEnd, v)) return false;
      auto x = static_cast<std::uint64_t>(unzigzag(v));
      if (mode[ci] == kDelta) x += prev;
      prev = x;
      set(r, c, x);
    }
  }
  return true;
}

}  // namespace strata::cuda::codec
