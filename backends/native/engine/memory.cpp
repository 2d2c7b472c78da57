// Target memory: process_vm_readv and /proc/PID/mem, with inserted int3 bytes hidden from readers.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "engine_impl.hpp"

namespace strata::native::engine {

namespace {

std::string where(std::uint64_t address, std::size_t size) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu bytes at 0x%llx", size, static_cast<unsigned long long>(address));
  return buf;
}

}  // namespace

Result<void> Engine::Impl::openMemory() {
  std::string path = "/proc/" + std::to_string(proc->pid) + "/mem";
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errnoError(errors::kMemoryUnreadable, "open " + path);
  proc->memFd = fd;
  return {};
}

Result<void> Engine::Impl::readRaw(std::uint64_t address, void* buffer, std::size_t size) {
  if (!proc) return Error{errors::kNoProcess, "read memory: no process is being debugged", true};
  if (size == 0) return {};
  iovec local{buffer, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = process_vm_readv(proc->pid, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(size)) return {};
  // Pages without read permission (or a partial read across a mapping) go through
  // /proc/PID/mem, which reads with the tracer's rights.
  std::size_t done = n > 0 ? static_cast<std::size_t>(n) : 0;
  auto* out = static_cast<char*>(buffer);
  while (done < size) {
    ssize_t m = pread(proc->memFd, out + done, size - done, static_cast<off_t>(address + done));
    if (m < 0 && errno == EINTR) continue;
    if (m < 0) return errnoError(errors::kMemoryUnreadable, "read memory, " + where(address + done, size - done));
    if (m == 0) return Error{errors::kMemoryUnreadable, "read memory, " + where(address + done, size - done) + ": not mapped", true};
    done += static_cast<std::size_t>(m);
  }
  return {};
}

Result<void> Engine::Impl::writeRaw(std::uint64_t address, const void* buffer, std::size_t size) {
  if (!proc) return Error{errors::kNoProcess, "write memory: no process is being debugged", true};
  const auto* in = static_cast<const char*>(buffer);
  std::size_t done = 0;
  // /proc/PID/mem writes even read-only text (as ptrace does), in one call.
  while (done < size) {
    ssize_t m = pwrite(proc->memFd, in + done, size - done, static_cast<off_t>(address + done));
    if (m < 0 && errno == EINTR) continue;
    if (m < 0) return errnoError(errors::kMemoryUnwritable, "write memory, " + where(address + done, size - done));
    if (m == 0) return Error{errors::kMemoryUnwritable, "write memory, " + where(address + done, size - done) + ": not mapped", true};
    done += static_cast<std::size_t>(m);
  }
  return {};
}

Result<void> Engine::Impl::readMemory(std::uint64_t address, void* buffer, std::size_t size) {
  if (auto r = readRaw(address, buffer, size); !r) return r;
  auto* out = static_cast<std::uint8_t*>(buffer);
  for (auto it = proc->sites.lower_bound(address); it != proc->sites.end() && it->first < address + size; ++it)
    if (it->second.inserted) out[it->first - address] = it->second.original;
  return {};
}

Result<void> Engine::Impl::writeMemory(std::uint64_t address, const void* buffer, std::size_t size) {
  if (!proc) return Error{errors::kNoProcess, "write memory: no process is being debugged", true};
  auto first = proc->sites.lower_bound(address);
  if (first == proc->sites.end() || first->first >= address + size) return writeRaw(address, buffer, size);
  // A write over a breakpoint changes what the breakpoint restores, and keeps the int3.
  std::vector<std::uint8_t> copy(static_cast<const std::uint8_t*>(buffer), static_cast<const std::uint8_t*>(buffer) + size);
  for (auto it = first; it != proc->sites.end() && it->first < address + size; ++it) {
    if (!it->second.inserted) continue;
    it->second.original = copy[it->first - address];
    siteChanged(it->first, it->second.original);
    copy[it->first - address] = 0xCC;
  }
  return writeRaw(address, copy.data(), size);
}

}  // namespace strata::native::engine
