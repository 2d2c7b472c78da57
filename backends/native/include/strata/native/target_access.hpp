// The seam between the ptrace engine (processes, threads, memory) and the symbolic side
// (DWARF, unwinding, variables, expressions, disassembly): what one needs of the other.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <string>
#include <vector>

#include "strata/result.hpp"

namespace strata::native {

// Memory of one stopped process. Implemented by the engine over process_vm_readv and
// /proc/PID/mem; reads never show the int3 bytes of inserted breakpoints.
class MemoryAccess {
 public:
  virtual ~MemoryAccess() = default;
  virtual Result<void> read(std::uint64_t address, void* buffer, std::size_t size) = 0;
  virtual Result<void> write(std::uint64_t address, const void* buffer, std::size_t size) = 0;
};

// Registers of one stopped thread (x86-64).
struct ThreadRegisters {
  pid_t tid = 0;
  user_regs_struct gpr{};
  user_fpregs_struct fpr{};
  bool hasFpr = false;
};

// One ELF object mapped into the target: the executable, the dynamic linker, each library.
struct LoadedObject {
  std::string path;          // as the dynamic linker names it (absolute where known)
  std::uint64_t loadBias = 0;  // l_addr: runtime address minus link-time address
  std::uint64_t dynamicAddress = 0;  // l_ld
};

}  // namespace strata::native
