// The chunk format: up to kChunkCapacity records of one track, column by column, each column
// constant or varint-coded (plain or delta), so a query decodes only the columns it needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/cuda/record.hpp"

namespace strata::cuda::codec {

inline constexpr std::uint32_t kChunkShift = 10;  // record id = chunk id << 10 | index
inline constexpr std::uint32_t kChunkCapacity = 1u << kChunkShift;

enum Column : std::uint32_t {
  kKind, kCopyKind, kSrcKind, kDstKind, kPid, kTid, kDevice, kContext, kStream, kCorrelation,
  kName, kSite, kResult, kStart, kDuration, kExternalId, kBytes, kGraphId, kGraphNodeId,
  kGridX, kGridY, kGridZ, kBlockX, kBlockY, kBlockZ, kRegisters, kStaticShared, kDynamicShared,
  kReserved, kColumnCount
};
using ColumnMask = std::uint32_t;
inline constexpr ColumnMask bit(Column c) { return ColumnMask{1} << c; }
inline constexpr ColumnMask kAllColumns = (ColumnMask{1} << kColumnCount) - 1;
// What a timeline or a join needs.
inline constexpr ColumnMask kTimeColumns = bit(kKind) | bit(kStart) | bit(kDuration) | bit(kName);

// Appends the encoding of `records` (already in the order they are to keep) to `out`.
void encode(const GpuRecord* records, std::size_t count, std::string& out);

// Decodes the columns in `mask` (others stay 0) into `out` (resized). False: a malformed blob.
bool decode(std::string_view blob, ColumnMask mask, std::vector<GpuRecord>& out);

inline std::uint64_t chunkOf(std::uint64_t id) { return id >> kChunkShift; }
inline std::uint32_t indexOf(std::uint64_t id) { return static_cast<std::uint32_t>(id & (kChunkCapacity - 1)); }
inline std::uint64_t recordId(std::uint64_t chunk, std::uint32_t index) { return chunk << kChunkShift | index; }

// LEB128 with zigzag, shared with the level-of-detail pages.
inline void putVarint(std::string& out, std::uint64_t v) {
  char buf[10];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}
inline bool getVarint(const char*& p, const char* end, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    auto b = static_cast<std::uint8_t>(*p++);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}
inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

}  // namespace strata::cuda::codec
