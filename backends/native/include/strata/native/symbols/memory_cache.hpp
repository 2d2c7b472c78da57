// A read cache over MemoryAccess for the span of one stop (or one condition evaluation).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "strata/native/target_access.hpp"

namespace strata::native::symbols {

// Reads whole 512-byte blocks (never crossing a page, so a block is mapped or not as a whole)
// and serves later reads from them: a condition touching a few locals costs one or two
// syscalls, not one per variable. Writes go through and drop the blocks they touch. Valid
// only while the target stays stopped: clear() on every resume.
class CachedMemory : public MemoryAccess {
 public:
  explicit CachedMemory(MemoryAccess& inner) : inner_(inner) {}
  Result<void> read(std::uint64_t address, void* buffer, std::size_t size) override;
  Result<void> write(std::uint64_t address, const void* buffer, std::size_t size) override;
  void clear() { blocks_.clear(); }

 private:
  static constexpr std::uint64_t kBlock = 512;
  MemoryAccess& inner_;
  std::unordered_map<std::uint64_t, std::array<std::uint8_t, kBlock>> blocks_;
};

}  // namespace strata::native::symbols
