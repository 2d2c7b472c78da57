// What the instruction that took a memory fault was doing: the read, write or instruction
// fetch that failed, from its decoded operands and the thread's registers, so a crash says
// "read of unmapped address 0x100c" where the kernel says "address not mapped to object".
#pragma once

#include <cstdint>
#include <string>

#include "strata/native/target_access.hpp"

namespace strata::native::symbols {

enum class FaultAccess { Unknown, Read, Write, Execute };

struct FaultSite {
  FaultAccess access = FaultAccess::Unknown;
  // The address the instruction used (its operand's effective address): what the kernel does
  // not report for a general protection fault (a non-canonical pointer), 0 when unknown.
  std::uint64_t address = 0;
};

// The access of the instruction at the thread's rip that faulted on `faultAddress` (the
// kernel's si_addr; 0 for a general protection fault). Reads the instruction through `memory`.
FaultSite faultSite(MemoryAccess& memory, const ThreadRegisters& regs, std::uint64_t faultAddress);

// One line for a SIGSEGV or SIGBUS with what failed: "SIGSEGV: read of unmapped address 0x100c",
// "SIGSEGV: write to 0x7f3a0000 denied by its mapping's permissions". Other signals, or an
// access not known: `kernelText` (engine::describeSignal's) unchanged.
std::string describeFault(int signo, int code, std::uint64_t faultAddress, const FaultSite& site,
                          const std::string& kernelText);

}  // namespace strata::native::symbols
