// Test-only fixture: runs a target under ptrace to its next SIGTRAP and exposes memory and registers.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "strata/native/target_access.hpp"

namespace strata::native::symbols::test {

// Memory of a stopped tracee through process_vm_readv/writev.
class ProcessMemory : public MemoryAccess {
 public:
  explicit ProcessMemory(pid_t pid) : pid_(pid) {}
  Result<void> read(std::uint64_t address, void* buffer, std::size_t size) override;
  Result<void> write(std::uint64_t address, const void* buffer, std::size_t size) override;
  int reads = 0;

 private:
  pid_t pid_;
};

class TracedProcess {
 public:
  // Forks, PTRACE_TRACEME + exec; returns stopped at the exec.
  static Result<TracedProcess*> start(const std::string& path, const std::vector<std::string>& args = {});
  ~TracedProcess();
  // PTRACE_CONT until the next SIGTRAP; fails if the program exits first.
  Result<void> continueToTrap();
  Result<ThreadRegisters> registers();
  Result<void> setRegisters(const ThreadRegisters& regs);
  // int3 at an address (PTRACE_POKETEXT); returns the original word for removeBreakpoint.
  Result<long> insertBreakpoint(std::uint64_t address);
  Result<void> removeBreakpoint(std::uint64_t address, long original);
  pid_t pid() const { return pid_; }
  ProcessMemory& memory() { return memory_; }

 private:
  explicit TracedProcess(pid_t pid) : pid_(pid), memory_(pid) {}
  pid_t pid_;
  ProcessMemory memory_;
  bool exited_ = false;
};

// Line of the first "@bp:NAME" / "@line:NAME" marker in a source file (0 when absent).
int markerLine(const std::string& sourcePath, const std::string& marker);

}  // namespace strata::native::symbols::test
