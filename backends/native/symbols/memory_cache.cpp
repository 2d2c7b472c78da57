// CachedMemory: block reads through the engine's MemoryAccess, reused while the target is stopped.
#include "strata/native/symbols/memory_cache.hpp"

#include <cstring>

namespace strata::native::symbols {

Result<void> CachedMemory::read(std::uint64_t address, void* buffer, std::size_t size) {
  // Large reads (disassembly, strings, pages of arrays) gain nothing from blocks.
  if (size > 4 * kBlock) return inner_.read(address, buffer, size);
  auto* out = static_cast<std::uint8_t*>(buffer);
  std::uint64_t at = address;
  std::size_t done = 0;
  while (done < size) {
    std::uint64_t block = at & ~(kBlock - 1);
    auto it = blocks_.find(block);
    if (it == blocks_.end()) {
      std::array<std::uint8_t, kBlock> data;
      if (!inner_.read(block, data.data(), kBlock)) return inner_.read(address, buffer, size);
      it = blocks_.emplace(block, data).first;
    }
    std::size_t offset = at - block;
    std::size_t n = std::min<std::size_t>(size - done, kBlock - offset);
    std::memcpy(out + done, it->second.data() + offset, n);
    done += n;
    at += n;
  }
  return {};
}

Result<void> CachedMemory::write(std::uint64_t address, const void* buffer, std::size_t size) {
  for (std::uint64_t block = address & ~(kBlock - 1); block < address + size; block += kBlock) blocks_.erase(block);
  return inner_.write(address, buffer, size);
}

}  // namespace strata::native::symbols
