// Call stacks: libunwind-ptrace unwinding of a stopped thread, then symbolized, inline-aware frames.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/native/symbols/module_map.hpp"

namespace strata::native::symbols {

// DWARF register numbers on x86-64 (also libunwind's): rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.
inline constexpr int kDwarfRegisterCount = 17;
inline constexpr int kDwarfRip = 16;
inline constexpr int kDwarfRsp = 7;
inline constexpr int kDwarfRbp = 6;

struct RegisterSet {
  std::array<std::uint64_t, kDwarfRegisterCount> value{};
  std::uint32_t valid = 0;  // bit n: value[n] is known in this frame
  bool has(int n) const { return n >= 0 && n < kDwarfRegisterCount && ((valid >> n) & 1); }
  void set(int n, std::uint64_t v) {
    value[n] = v;
    valid |= 1u << n;
  }
};

// Registers of a stopped thread in DWARF numbering, all valid.
RegisterSet registersFrom(const ThreadRegisters& regs);

// One physical frame as the unwinder found it.
struct RawFrame {
  std::uint64_t pc = 0;       // runtime; for callers, the return address
  std::uint64_t cfa = 0;      // canonical frame address (the caller's sp at the call)
  bool cfaKnown = false;
  bool signalFrame = false;
  RegisterSet registers;      // frame 0: all; callers: callee-saved, sp and ip
  std::uint64_t lookupPc() const { return signalFrame || !callerFrame ? pc : pc - 1; }
  bool callerFrame = false;
};

// libunwind-ptrace over one traced process. Without `known` registers every call must run on
// the thread that is the tracer (ptrace requests from other threads fail with ESRCH); with them
// (the engine's copy, as a debugger in another process than its engine has) the stack is read
// with process_vm_readv alone.
class RemoteUnwinder {
 public:
  static Result<std::unique_ptr<RemoteUnwinder>> create();
  ~RemoteUnwinder();
  // tid must be ptrace-stopped. Stops at maxFrames or at the outermost frame.
  Result<std::vector<RawFrame>> unwind(pid_t tid, std::size_t maxFrames = 4096, const ThreadRegisters* known = nullptr);
  // The same, first through the modules' own CFI with rules cached per pc (a 1000-deep
  // recursion: one rule, ~0.2 µs a frame); any frame whose rule is more than "register +
  // offset" (signal trampolines, CFA expressions) hands the whole unwind to libunwind.
  Result<std::vector<RawFrame>> unwind(pid_t tid, const ModuleMap& modules, std::size_t maxFrames = 4096,
                                       const ThreadRegisters* known = nullptr);
  // A thread of an image that does not run (a core file): its saved registers and memory,
  // through the modules' CFI only (no ptrace, no libunwind); a signal handler's frame is
  // crossed through the context the kernel saved under it (__restore_rt). Stops where the CFI
  // ends or fails; frame 0 is kept even in code no module holds.
  Result<std::vector<RawFrame>> unwindImage(const ThreadRegisters& registers, MemoryAccess& memory,
                                            const ModuleMap& modules, std::size_t maxFrames = 4096);
  // After libraries load or unload: cached unwind info may describe stale mappings.
  void flushCaches();

 private:
  RemoteUnwinder();
  std::vector<RawFrame> walkCfi(RegisterSet regs, const std::function<bool(std::uint64_t, std::uint64_t*)>& readWord,
                                const ModuleMap& modules, std::size_t maxFrames, bool crossSignalFrames, bool& done);
  void* addressSpace_ = nullptr;  // unw_addr_space_t
  struct RuleCache;
  std::unique_ptr<RuleCache> rules_;
};

// One frame as a user sees it; an inlined call is a frame of its own over the same
// physical frame.
struct Frame {
  std::size_t physicalIndex = 0;
  std::uint64_t pc = 0;  // runtime
  std::string function;  // qualified name, or "module!symbol+0x.." / "module+0x.." without debug info
  std::optional<SourceLocation> location;
  std::string moduleName;
  bool hasDebugInfo = false;
  bool inlined = false;
  Dwarf_Off scopeDie = 0;  // the subprogram or inlined_subroutine this frame runs in
  std::shared_ptr<ObjectSymbols> symbols;
  std::uint64_t loadBias = 0;
};

// The stack of one thread at one stop: raw frames are unwound once, symbolized lazily page by
// page and cached by pc, so paging a 1000-deep recursion costs one unwind and a few lookups.
class StackView {
 public:
  StackView(std::vector<RawFrame> raw, const ModuleMap& modules);
  std::size_t physicalCount() const { return raw_.size(); }
  // Every frame, inlined ones included (symbolizes all physical frames; cached per pc).
  std::size_t totalFrames();
  std::vector<Frame> frames(std::size_t start, std::size_t levels);
  const RawFrame& raw(std::size_t physicalIndex) const { return raw_[physicalIndex]; }

 private:
  const std::vector<Frame>& expand(std::size_t physicalIndex);
  std::vector<Frame> symbolize(const RawFrame& frame, std::size_t index);
  std::vector<RawFrame> raw_;
  const ModuleMap& modules_;
  std::vector<std::optional<std::vector<Frame>>> expanded_;
  std::unordered_map<std::uint64_t, std::vector<Frame>> byPc_;
};

// Computes a frame's CFA from .eh_frame/.debug_frame when the unwinder could not say.
std::optional<std::uint64_t> cfaFromCfi(ObjectSymbols& symbols, std::uint64_t fileAddress,
                                        const RegisterSet& registers);

}  // namespace strata::native::symbols
