// The access that faulted: capstone's operand details (CS_OPT_DETAIL) give each memory
// operand's base, index, scale, displacement and access; the registers give its address.
#include "strata/native/symbols/fault_access.hpp"

#include <signal.h>

#include <capstone/capstone.h>

#include <optional>

#include "internal.hpp"

namespace strata::native::symbols {

namespace {

std::optional<std::uint64_t> registerValue(x86_reg reg, const user_regs_struct& r, std::uint64_t nextRip) {
  switch (reg) {
    case X86_REG_RAX: return r.rax;
    case X86_REG_RBX: return r.rbx;
    case X86_REG_RCX: return r.rcx;
    case X86_REG_RDX: return r.rdx;
    case X86_REG_RSI: return r.rsi;
    case X86_REG_RDI: return r.rdi;
    case X86_REG_RBP: return r.rbp;
    case X86_REG_RSP: return r.rsp;
    case X86_REG_R8: return r.r8;
    case X86_REG_R9: return r.r9;
    case X86_REG_R10: return r.r10;
    case X86_REG_R11: return r.r11;
    case X86_REG_R12: return r.r12;
    case X86_REG_R13: return r.r13;
    case X86_REG_R14: return r.r14;
    case X86_REG_R15: return r.r15;
    case X86_REG_RIP: return nextRip;
    case X86_REG_EAX: return r.rax & 0xffffffffu;
    case X86_REG_EBX: return r.rbx & 0xffffffffu;
    case X86_REG_ECX: return r.rcx & 0xffffffffu;
    case X86_REG_EDX: return r.rdx & 0xffffffffu;
    case X86_REG_ESI: return r.rsi & 0xffffffffu;
    case X86_REG_EDI: return r.rdi & 0xffffffffu;
    case X86_REG_EBP: return r.rbp & 0xffffffffu;
    case X86_REG_ESP: return r.rsp & 0xffffffffu;
    case X86_REG_R8D: return r.r8 & 0xffffffffu;
    case X86_REG_R9D: return r.r9 & 0xffffffffu;
    case X86_REG_R10D: return r.r10 & 0xffffffffu;
    case X86_REG_R11D: return r.r11 & 0xffffffffu;
    case X86_REG_R12D: return r.r12 & 0xffffffffu;
    case X86_REG_R13D: return r.r13 & 0xffffffffu;
    case X86_REG_R14D: return r.r14 & 0xffffffffu;
    case X86_REG_R15D: return r.r15 & 0xffffffffu;
    case X86_REG_INVALID: return 0;
    default: return std::nullopt;  // a vector index (VSIB): not followed
  }
}

FaultAccess accessOf(std::uint8_t bits) {
  if (bits & CS_AC_WRITE) return FaultAccess::Write;  // read-modify-write faults as a write
  if (bits & CS_AC_READ) return FaultAccess::Read;
  return FaultAccess::Unknown;
}

bool isCanonical(std::uint64_t a) {
  std::uint64_t top = a >> 47;
  return top == 0 || top == 0x1ffff;
}

}  // namespace

FaultSite faultSite(MemoryAccess& memory, const ThreadRegisters& regs, std::uint64_t faultAddress) {
  FaultSite site;
  const std::uint64_t rip = regs.gpr.rip;
  // A jump or call to a bad address faults on the fetch: rip is the fault address.
  if (faultAddress != 0 && faultAddress == rip) return {FaultAccess::Execute, rip};
  const std::vector<std::uint8_t> code = detail::readAvailable(memory, rip, 15);  // the longest x86 instruction
  if (code.empty()) return {FaultAccess::Execute, rip};
  csh handle = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return site;
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = nullptr;
  if (cs_disasm(handle, code.data(), code.size(), rip, 1, &insn) != 1) {
    cs_close(&handle);
    return site;
  }
  const cs_x86& x = insn->detail->x86;
  const std::uint64_t next = rip + insn->size;
  // A general protection fault (no address) at a call, jump or return: a target that is no
  // address at all, faulting before the instruction does anything.
  if (faultAddress == 0 && (insn->id == X86_INS_CALL || insn->id == X86_INS_JMP || insn->id == X86_INS_RET)) {
    std::optional<std::uint64_t> target;
    std::uint64_t slot = regs.gpr.rsp;
    bool fromMemory = insn->id == X86_INS_RET;
    if (insn->id != X86_INS_RET && x.op_count == 1 && x.operands[0].type == X86_OP_REG) {
      target = registerValue(x.operands[0].reg, regs.gpr, next);
    } else if (insn->id != X86_INS_RET && x.op_count == 1 && x.operands[0].type == X86_OP_MEM) {
      const auto& m = x.operands[0].mem;
      auto base = registerValue(m.base, regs.gpr, next);
      auto index = registerValue(m.index, regs.gpr, next);
      if (base && index) {
        slot = *base + *index * static_cast<std::uint64_t>(m.scale) + static_cast<std::uint64_t>(m.disp);
        fromMemory = true;
      }
    }
    std::uint64_t loaded = 0;
    if (fromMemory && memory.read(slot, &loaded, sizeof loaded)) target = loaded;
    if (target && !isCanonical(*target)) {
      cs_free(insn, 1);
      cs_close(&handle);
      return {FaultAccess::Execute, *target};
    }
  }
  FaultAccess matched = FaultAccess::Unknown, only = FaultAccess::Unknown;
  std::uint64_t matchedAddress = 0, onlyAddress = 0;
  int memoryOperands = 0;
  for (std::uint8_t i = 0; i < x.op_count; ++i) {
    const cs_x86_op& op = x.operands[i];
    if (op.type != X86_OP_MEM) continue;
    auto base = registerValue(op.mem.base, regs.gpr, next);
    auto index = registerValue(op.mem.index, regs.gpr, next);
    if (!base || !index) continue;
    std::uint64_t ea = *base + *index * static_cast<std::uint64_t>(op.mem.scale) + static_cast<std::uint64_t>(op.mem.disp);
    if (op.mem.segment == X86_REG_FS) ea += regs.gpr.fs_base;
    if (op.mem.segment == X86_REG_GS) ea += regs.gpr.gs_base;
    FaultAccess kind = accessOf(op.access);
    if (insn->id == X86_INS_LEA || insn->id == X86_INS_NOP || kind == FaultAccess::Unknown) continue;
    ++memoryOperands;
    only = memoryOperands == 1 ? kind : (only == kind ? kind : FaultAccess::Unknown);
    onlyAddress = ea;
    // The kernel names the first byte that failed: inside the operand (one that spans a page).
    const std::uint64_t size = op.size ? op.size : 1;
    if (faultAddress >= ea && faultAddress - ea < size + 64) {
      if (matched == FaultAccess::Unknown || kind == FaultAccess::Write) matched = kind;
      matchedAddress = ea;
    }
  }
  // The stack accesses no operand names: push and call write below rsp, pop and ret read at it.
  if (matched == FaultAccess::Unknown && memoryOperands == 0) {
    switch (insn->id) {
      case X86_INS_PUSH: case X86_INS_CALL: case X86_INS_PUSHFQ:
        matched = FaultAccess::Write;
        matchedAddress = regs.gpr.rsp - 8;
        break;
      case X86_INS_POP: case X86_INS_RET: case X86_INS_POPFQ: case X86_INS_LEAVE:
        matched = FaultAccess::Read;
        matchedAddress = insn->id == X86_INS_LEAVE ? regs.gpr.rbp : regs.gpr.rsp;
        break;
      default: break;
    }
  }
  cs_free(insn, 1);
  cs_close(&handle);
  if (matched != FaultAccess::Unknown) return {matched, matchedAddress};
  // No address to go by (a general protection fault reports 0): one memory operand, or all of
  // one kind, says what it was; the operand's address is the one the kernel did not report.
  if (faultAddress == 0 && only != FaultAccess::Unknown) return {only, memoryOperands == 1 ? onlyAddress : 0};
  return site;
}

std::string describeFault(int signo, int code, std::uint64_t faultAddress, const FaultSite& site,
                          const std::string& kernelText) {
  if (signo != SIGSEGV || site.access == FaultAccess::Unknown) return kernelText;
  const char* verb = site.access == FaultAccess::Read ? "read of" : site.access == FaultAccess::Write ? "write to" : "execution at";
  std::string text = "SIGSEGV: ";
  if (code == SEGV_MAPERR) return text + verb + " unmapped address " + hexAddress(faultAddress);
  if (code == SEGV_ACCERR) return text + verb + " " + hexAddress(faultAddress) + " denied by its mapping's permissions";
  if (code == SI_KERNEL && site.address != 0) {
    // A general protection fault: most often a pointer that is no address at all.
    if (!isCanonical(site.address)) return text + verb + " non-canonical address " + hexAddress(site.address) + " (general protection fault)";
    return text + "general protection fault on the " + (site.access == FaultAccess::Read ? "read of " : "write to ") + hexAddress(site.address);
  }
  return kernelText;
}

}  // namespace strata::native::symbols
