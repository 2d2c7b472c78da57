// Unwinding with libunwind-ptrace and symbolizing frames (inlined calls become frames of their own).
#include "strata/native/symbols/stack.hpp"

#include <libunwind-ptrace.h>

#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>

#include "internal.hpp"

namespace strata::native::symbols {

RegisterSet registersFrom(const ThreadRegisters& t) {
  const user_regs_struct& r = t.gpr;
  RegisterSet s;
  const std::uint64_t values[kDwarfRegisterCount] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
                                                     r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip};
  for (int i = 0; i < kDwarfRegisterCount; ++i) s.set(i, values[i]);
  return s;
}

namespace {

// libunwind-ptrace reads the stack one PTRACE_PEEKDATA word at a time; a deep stack costs
// thousands of syscalls. Reads go through a page cache over process_vm_readv instead (valid for
// one unwind of a stopped thread); every other accessor is _UPT's own.
struct UnwindArg {
  void* upt = nullptr;
  pid_t pid = 0;
  std::unordered_map<std::uint64_t, std::array<unsigned char, 4096>> pages;
  // A register no frame saved is read from the thread itself, once per frame asked about it:
  // one PTRACE_PEEKUSER each unless remembered.
  std::array<unw_word_t, 64> registers{};
  std::uint64_t knownRegisters = 0;
};

// _UPT's own accessors call back through the address space with their UPT pointer as `arg`,
// so an accessor may see either argument; the unwind in progress on this thread tells which.
thread_local UnwindArg* t_current = nullptr;

UnwindArg* argOf(void* arg) {
  if (t_current != nullptr && (arg == t_current || arg == t_current->upt)) return t_current;
  return nullptr;
}
void* uptOf(void* arg) {
  UnwindArg* a = argOf(arg);
  return a != nullptr ? a->upt : arg;
}

int findProcInfo(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi, int need, void* arg) {
  return _UPT_accessors.find_proc_info(as, ip, pi, need, uptOf(arg));
}
void putUnwindInfo(unw_addr_space_t as, unw_proc_info_t* pi, void* arg) {
  _UPT_accessors.put_unwind_info(as, pi, uptOf(arg));
}
int getDynInfoListAddr(unw_addr_space_t as, unw_word_t* addr, void* arg) {
  return _UPT_accessors.get_dyn_info_list_addr(as, addr, uptOf(arg));
}
int accessMem(unw_addr_space_t as, unw_word_t addr, unw_word_t* val, int write, void* arg) {
  UnwindArg* a = argOf(arg);
  std::uint64_t page = addr & ~std::uint64_t{4095};
  if (a == nullptr || write || (addr & 4095) + sizeof(unw_word_t) > 4096)
    return _UPT_accessors.access_mem(as, addr, val, write, uptOf(arg));
  auto it = a->pages.find(page);
  if (it == a->pages.end()) {
    std::array<unsigned char, 4096> buf;
    iovec local{buf.data(), buf.size()};
    iovec remote{reinterpret_cast<void*>(page), buf.size()};
    if (process_vm_readv(a->pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(buf.size()))
      return _UPT_accessors.access_mem(as, addr, val, write, a->upt);
    it = a->pages.emplace(page, buf).first;
  }
  std::memcpy(val, it->second.data() + (addr - page), sizeof(unw_word_t));
  return 0;
}
int accessReg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t* val, int write, void* arg) {
  UnwindArg* a = argOf(arg);
  if (a == nullptr || write || reg < 0 || reg >= 64) return _UPT_accessors.access_reg(as, reg, val, write, uptOf(arg));
  if ((a->knownRegisters >> reg) & 1) {
    *val = a->registers[reg];
    return 0;
  }
  int rc = _UPT_accessors.access_reg(as, reg, val, write, a->upt);
  if (rc == 0) {
    a->registers[reg] = *val;
    a->knownRegisters |= 1ULL << reg;
  }
  return rc;
}
int accessFpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t* val, int write, void* arg) {
  return _UPT_accessors.access_fpreg(as, reg, val, write, uptOf(arg));
}
int resume(unw_addr_space_t as, unw_cursor_t* c, void* arg) {
  return _UPT_accessors.resume(as, c, uptOf(arg));
}
int getProcName(unw_addr_space_t as, unw_word_t addr, char* buf, std::size_t len, unw_word_t* off, void* arg) {
  return _UPT_accessors.get_proc_name(as, addr, buf, len, off, uptOf(arg));
}

}  // namespace

Result<std::unique_ptr<RemoteUnwinder>> RemoteUnwinder::create() {
  std::unique_ptr<RemoteUnwinder> self(new RemoteUnwinder());
  static unw_accessors_t accessors = [] {
    unw_accessors_t a = _UPT_accessors;
    a.find_proc_info = findProcInfo;
    a.put_unwind_info = putUnwindInfo;
    a.get_dyn_info_list_addr = getDynInfoListAddr;
    a.access_mem = accessMem;
    a.access_reg = accessReg;
    a.access_fpreg = accessFpreg;
    a.resume = resume;
    a.get_proc_name = getProcName;
    return a;
  }();
  unw_addr_space_t as = unw_create_addr_space(&accessors, 0);
  if (as == nullptr) return Error{errors::kUnwindFailed, "unw_create_addr_space failed", true};
  // Unwind info is cached across unwinds of the same process: a 1000-deep stack looks up the
  // same few procedures again and again.
  unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
  self->addressSpace_ = as;
  return self;
}

// How to find a caller's registers at one pc: CFA = register + offset, and each of the return
// address and the callee-saved registers either at CFA + offset, unchanged, or undefined.
struct CfiRule {
  bool supported = false;
  int cfaRegister = 0;
  std::int64_t cfaOffset = 0;
  enum class Kind : std::uint8_t { Same, Undefined, AtCfa };
  struct Saved {
    Kind kind = Kind::Same;
    std::int64_t offset = 0;
  };
  std::array<Saved, kDwarfRegisterCount> regs{};  // indexed by DWARF number; rip: the return address
};

struct RemoteUnwinder::RuleCache {
  // By object; the shared_ptr keeps the key alive while its rules are cached.
  std::map<const ObjectSymbols*, std::pair<std::shared_ptr<ObjectSymbols>, std::unordered_map<std::uint64_t, CfiRule>>>
      byObject;
};

namespace {

constexpr int kCalleeSaved[] = {3, 6, 12, 13, 14, 15};  // rbx rbp r12..r15 (rsp is the CFA)

CfiRule ruleAt(ObjectSymbols& symbols, std::uint64_t fileAddress) {
  CfiRule rule;
  Dwarf_CFI* cfi = symbols.cfi();
  Dwarf_Frame* frame = nullptr;
  if (cfi == nullptr || dwarf_cfi_addrframe(cfi, fileAddress, &frame) != 0) return rule;
  struct Free {
    Dwarf_Frame* f;
    ~Free() { std::free(f); }
  } freeFrame{frame};
  Dwarf_Op* ops = nullptr;
  std::size_t n = 0;
  if (dwarf_frame_cfa(frame, &ops, &n) != 0 || n != 1) return rule;
  if (ops[0].atom == DW_OP_bregx) {
    rule.cfaRegister = static_cast<int>(ops[0].number);
    rule.cfaOffset = static_cast<std::int64_t>(ops[0].number2);
  } else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
    rule.cfaRegister = ops[0].atom - DW_OP_breg0;
    rule.cfaOffset = static_cast<std::int64_t>(ops[0].number);
  } else {
    return rule;
  }
  if (rule.cfaRegister != kDwarfRsp && rule.cfaRegister != kDwarfRbp) return rule;
  auto describe = [&](int regno, CfiRule::Saved& out) {
    Dwarf_Op mem[3];
    Dwarf_Op* rops = nullptr;
    std::size_t rn = 0;
    if (dwarf_frame_register(frame, regno, mem, &rops, &rn) < 0) return false;
    if (rn == 0) {
      // libdw: ops_mem means "undefined", a null pointer "same value".
      out.kind = rops == nullptr ? CfiRule::Kind::Same : CfiRule::Kind::Undefined;
      return true;
    }
    // offset(N): the value is saved at CFA + N.
    if (rn == 2 && rops[0].atom == DW_OP_call_frame_cfa && rops[1].atom == DW_OP_plus_uconst) {
      out.kind = CfiRule::Kind::AtCfa;
      out.offset = static_cast<std::int64_t>(rops[1].number);
      return true;
    }
    if (rn == 1 && rops[0].atom == DW_OP_call_frame_cfa) {
      out.kind = CfiRule::Kind::AtCfa;
      out.offset = 0;
      return true;
    }
    return false;
  };
  if (!describe(kDwarfRip, rule.regs[kDwarfRip])) return rule;
  for (int r : kCalleeSaved)
    if (!describe(r, rule.regs[r])) return rule;
  rule.supported = true;
  return rule;
}

}  // namespace

RemoteUnwinder::RemoteUnwinder() : rules_(std::make_unique<RuleCache>()) {}

Result<std::vector<RawFrame>> RemoteUnwinder::unwind(pid_t tid, const ModuleMap& modules, std::size_t maxFrames,
                                                     const ThreadRegisters* known) {
  user_regs_struct gpr{};
  if (known) gpr = known->gpr;
  else if (ptrace(PTRACE_GETREGS, tid, nullptr, &gpr) != 0) return unwind(tid, maxFrames);
  ThreadRegisters threadRegs;
  threadRegs.tid = tid;
  threadRegs.gpr = gpr;
  std::unordered_map<std::uint64_t, std::array<unsigned char, 4096>> pages;
  auto readWord = [&](std::uint64_t addr, std::uint64_t* out) {
    std::uint64_t page = addr & ~std::uint64_t{4095};
    if ((addr & 4095) + 8 > 4096) {  // straddles two pages: read it alone
      iovec local{out, 8};
      iovec remote{reinterpret_cast<void*>(addr), 8};
      return process_vm_readv(tid, &local, 1, &remote, 1, 0) == 8;
    }
    auto it = pages.find(page);
    if (it == pages.end()) {
      // A stack is read upwards: one syscall fetches this page and the next 15 when mapped.
      std::vector<unsigned char> chunk(16 * 4096);
      iovec local{chunk.data(), chunk.size()};
      iovec remote{reinterpret_cast<void*>(page), chunk.size()};
      ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
      if (got < 4096) {
        local.iov_len = remote.iov_len = 4096;
        if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != 4096) return false;
        got = 4096;
      }
      for (ssize_t off = 0; off + 4096 <= got; off += 4096) {
        std::array<unsigned char, 4096> one;
        std::memcpy(one.data(), chunk.data() + off, 4096);
        pages.emplace(page + off, one);
      }
      it = pages.find(page);
    }
    std::memcpy(out, it->second.data() + (addr - page), 8);
    return true;
  };
  bool done = false;
  std::vector<RawFrame> frames = walkCfi(registersFrom(threadRegs), readWord, modules, maxFrames, false, done);
  if (frames.size() >= maxFrames || (done && !frames.empty())) return frames;
  return unwind(tid, maxFrames, known);  // something only libunwind handles: start over with it
}

Result<std::vector<RawFrame>> RemoteUnwinder::unwindImage(const ThreadRegisters& registers, MemoryAccess& memory,
                                                          const ModuleMap& modules, std::size_t maxFrames) {
  auto readWord = [&](std::uint64_t addr, std::uint64_t* out) { return static_cast<bool>(memory.read(addr, out, 8)); };
  bool done = false;
  std::vector<RawFrame> frames = walkCfi(registersFrom(registers), readWord, modules, maxFrames, true, done);
  if (frames.empty())
    return Error{errors::kUnwindFailed, "thread " + std::to_string(registers.tid) + " has no frames to unwind", true};
  return frames;
}

namespace {

// The kernel's return path from a signal handler (glibc's __restore_rt): mov $15, %rax; syscall.
constexpr unsigned char kSigreturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
// DWARF register number of each of mcontext's gregs (REG_R8 ... REG_RIP), -1 for the rest.
constexpr int kGregToDwarf[] = {8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16};

}  // namespace

std::vector<RawFrame> RemoteUnwinder::walkCfi(RegisterSet regs, const std::function<bool(std::uint64_t, std::uint64_t*)>& readWord,
                                              const ModuleMap& modules, std::size_t maxFrames, bool crossSignalFrames,
                                              bool& done) {
  std::vector<RawFrame> frames;
  frames.reserve(std::min<std::size_t>(maxFrames, 1024));
  bool exact = false;  // the frame a signal interrupted: its pc is no return address
  while (frames.size() < maxFrames) {
    RawFrame f;
    f.callerFrame = !frames.empty() && !exact;
    exact = false;
    f.pc = regs.value[kDwarfRip];
    if (f.pc == 0) break;
    if (crossSignalFrames) {
      std::uint64_t code[2] = {};
      if (readWord(f.pc, &code[0]) && readWord(f.pc + 8, &code[1]) && std::memcmp(code, kSigreturn, sizeof kSigreturn) == 0 &&
          regs.has(kDwarfRsp)) {
        // A handler returned here: the interrupted registers are in the ucontext at sp
        // (uc_flags, uc_link and uc_stack before uc_mcontext's gregs).
        f.signalFrame = true;
        f.registers = regs;
        f.cfa = regs.value[kDwarfRsp];
        f.cfaKnown = true;
        std::uint64_t gregs = regs.value[kDwarfRsp] + 40;
        RegisterSet interrupted;
        bool ok = true;
        for (int i = 0; i < 17 && ok; ++i) {
          std::uint64_t value = 0;
          ok = readWord(gregs + 8 * static_cast<std::uint64_t>(i), &value);
          interrupted.set(kGregToDwarf[i], value);
        }
        frames.push_back(f);
        if (!ok) break;
        regs = interrupted;
        exact = true;
        continue;
      }
    }
    f.registers = regs;
    if (f.callerFrame) {
      // What libunwind reports for callers: callee-saved registers, sp and ip.
      RegisterSet kept;
      for (int r : kCalleeSaved)
        if (regs.has(r)) kept.set(r, regs.value[r]);
      kept.set(kDwarfRsp, regs.value[kDwarfRsp]);
      kept.set(kDwarfRip, regs.value[kDwarfRip]);
      f.registers = kept;
    }
    std::uint64_t lookup = f.lookupPc();
    const Module* m = modules.moduleFor(lookup);
    if (m == nullptr || !m->symbols) {  // unknown code: libunwind may know more
      if (crossSignalFrames && frames.empty()) frames.push_back(f);
      break;
    }
    auto& entry = rules_->byObject[m->symbols.get()];
    if (!entry.first) entry.first = m->symbols;
    std::uint64_t fileAddress = lookup - m->object.loadBias;
    auto ruleIt = entry.second.find(fileAddress);
    if (ruleIt == entry.second.end()) ruleIt = entry.second.emplace(fileAddress, ruleAt(*m->symbols, fileAddress)).first;
    const CfiRule& rule = ruleIt->second;
    if (!rule.supported || !regs.has(rule.cfaRegister)) break;
    std::uint64_t cfa = regs.value[rule.cfaRegister] + rule.cfaOffset;
    f.cfa = cfa;
    f.cfaKnown = true;
    frames.push_back(f);
    const CfiRule::Saved& ra = rule.regs[kDwarfRip];
    if (ra.kind == CfiRule::Kind::Undefined) {  // the outermost frame (_start, clone)
      done = true;
      break;
    }
    if (ra.kind != CfiRule::Kind::AtCfa) break;
    RegisterSet caller;
    std::uint64_t value = 0;
    if (!readWord(cfa + ra.offset, &value)) break;
    caller.set(kDwarfRip, value);
    caller.set(kDwarfRsp, cfa);
    bool ok = true;
    for (int r : kCalleeSaved) {
      const CfiRule::Saved& saved = rule.regs[r];
      if (saved.kind == CfiRule::Kind::Same) {
        if (regs.has(r)) caller.set(r, regs.value[r]);
      } else if (saved.kind == CfiRule::Kind::AtCfa) {
        if (!readWord(cfa + saved.offset, &value)) {
          ok = false;
          break;
        }
        caller.set(r, value);
      }
    }
    if (!ok || cfa <= regs.value[kDwarfRsp]) break;  // the stack must grow toward callers
    if (caller.value[kDwarfRip] == 0) {  // a zero return address ends the chain too
      done = true;
      break;
    }
    regs = caller;
  }
  return frames;
}

RemoteUnwinder::~RemoteUnwinder() {
  if (addressSpace_ != nullptr) unw_destroy_addr_space(static_cast<unw_addr_space_t>(addressSpace_));
}

void RemoteUnwinder::flushCaches() { unw_flush_cache(static_cast<unw_addr_space_t>(addressSpace_), 0, 0); }

Result<std::vector<RawFrame>> RemoteUnwinder::unwind(pid_t tid, std::size_t maxFrames, const ThreadRegisters* known) {
  void* upt = _UPT_create(tid);
  if (upt == nullptr) return Error{errors::kUnwindFailed, "_UPT_create for thread " + std::to_string(tid) + " failed", true};
  UnwindArg arg;
  arg.upt = upt;
  arg.pid = tid;
  if (known) {
    // libunwind's register numbers on x86-64 are DWARF's: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.
    RegisterSet set = registersFrom(*known);
    for (int reg = 0; reg < kDwarfRegisterCount; ++reg) {
      if (!set.has(reg)) continue;
      arg.registers[reg] = set.value[reg];
      arg.knownRegisters |= 1ULL << reg;
    }
  }
  struct Scope {
    explicit Scope(UnwindArg* a) { t_current = a; }
    ~Scope() { t_current = nullptr; }
  } scope(&arg);
  unw_cursor_t cursor;
  int rc = unw_init_remote(&cursor, static_cast<unw_addr_space_t>(addressSpace_), &arg);
  if (rc < 0) {
    _UPT_destroy(upt);
    return Error{errors::kUnwindFailed, "unw_init_remote for thread " + std::to_string(tid) + ": " + unw_strerror(rc), true};
  }
  static const int calleeSaved[] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_RSP, UNW_X86_64_R12,
                                    UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15, UNW_X86_64_RIP};
  std::vector<RawFrame> frames;
  while (frames.size() < maxFrames) {
    RawFrame f;
    f.callerFrame = !frames.empty();
    unw_word_t value = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &value) < 0 || value == 0) break;
    f.pc = value;
    if (!f.callerFrame) {
      for (int reg = 0; reg < kDwarfRegisterCount; ++reg)
        if (unw_get_reg(&cursor, reg, &value) == 0) f.registers.set(reg, value);
    } else {
      for (int reg : calleeSaved)
        if (unw_get_reg(&cursor, reg, &value) == 0) f.registers.set(reg, value);
    }
    f.signalFrame = unw_is_signal_frame(&cursor) > 0;
    // The caller's sp right after the return is the callee's CFA.
    if (!frames.empty() && f.registers.has(kDwarfRsp)) {
      frames.back().cfa = f.registers.value[kDwarfRsp];
      frames.back().cfaKnown = true;
    }
    frames.push_back(f);
    if (unw_step(&cursor) <= 0) break;  // 0: outermost frame; < 0: unwind info ran out
  }
  _UPT_destroy(upt);
  if (frames.empty()) return Error{errors::kUnwindFailed, "thread " + std::to_string(tid) + " has no frames to unwind", true};
  return frames;
}

std::optional<std::uint64_t> cfaFromCfi(ObjectSymbols& symbols, std::uint64_t fileAddress,
                                        const RegisterSet& registers) {
  Dwarf_CFI* cfi = symbols.cfi();
  if (cfi == nullptr) return std::nullopt;
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, fileAddress, &frame) != 0) return std::nullopt;
  Dwarf_Op* ops = nullptr;
  std::size_t n = 0;
  std::optional<std::uint64_t> out;
  if (dwarf_frame_cfa(frame, &ops, &n) == 0 && n == 1) {
    int reg = -1;
    std::int64_t offset = 0;
    if (ops[0].atom == DW_OP_bregx) {
      reg = static_cast<int>(ops[0].number);
      offset = static_cast<std::int64_t>(ops[0].number2);
    } else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
      reg = ops[0].atom - DW_OP_breg0;
      offset = static_cast<std::int64_t>(ops[0].number);
    }
    if (registers.has(reg)) out = registers.value[reg] + offset;
  }
  std::free(frame);
  return out;
}

StackView::StackView(std::vector<RawFrame> raw, const ModuleMap& modules) : raw_(std::move(raw)), modules_(modules) {
  expanded_.resize(raw_.size());
  // The outermost frame has no caller to tell its CFA; the CFI can.
  for (std::size_t i = 0; i < raw_.size(); ++i) {
    RawFrame& f = raw_[i];
    if (f.cfaKnown) continue;
    if (const Module* m = modules_.moduleFor(f.lookupPc())) {
      if (auto cfa = cfaFromCfi(*m->symbols, f.lookupPc() - m->object.loadBias, f.registers)) {
        f.cfa = *cfa;
        f.cfaKnown = true;
      }
    }
  }
}

std::vector<Frame> StackView::symbolize(const RawFrame& raw, std::size_t index) {
  std::vector<Frame> out;
  Frame base;
  base.physicalIndex = index;
  base.pc = raw.pc;
  std::uint64_t pc = raw.lookupPc();
  const Module* module = modules_.moduleFor(pc);
  if (module == nullptr) {
    base.function = detail::hexAddress(raw.pc);
    out.push_back(base);
    return out;
  }
  base.moduleName = module->name();
  base.symbols = module->symbols;
  base.loadBias = module->object.loadBias;
  ObjectSymbols& symbols = *module->symbols;
  std::uint64_t fileAddress = pc - module->object.loadBias;
  Dwarf_Die cu;
  std::vector<Dwarf_Die> scopes;
  // A module whose DWARF is compressed (a distribution's debug file) is named from its symbol
  // table until something needs its DWARF: opening it would cost ~100 ms for libc.
  bool useDwarf = symbols.hasDebugInfo() && symbols.dwarfCheap();
  if (useDwarf && symbols.cuForAddress(fileAddress, &cu)) scopes = symbols.scopesAt(fileAddress);
  if (!scopes.empty()) {
    std::optional<SourceLocation> location = symbols.locationForAddress(fileAddress);
    Dwarf_Files* files = nullptr;
    std::size_t fileCount = 0;
    for (Dwarf_Die& scope : scopes) {
      int tag = dwarf_tag(&scope);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
      Frame f = base;
      f.hasDebugInfo = true;
      f.inlined = tag == DW_TAG_inlined_subroutine;
      f.scopeDie = dwarf_dieoffset(&scope);
      f.function = qualifiedFunctionName(&scope);
      f.location = location;
      out.push_back(std::move(f));
      if (tag == DW_TAG_subprogram) break;
      // The frame that called the inlined copy is at the copy's call site.
      Dwarf_Attribute attr;
      Dwarf_Word callFile = 0, callLine = 0, callColumn = 0;
      if (dwarf_formudata(dwarf_attr(&scope, DW_AT_call_file, &attr), &callFile) == 0 &&
          dwarf_formudata(dwarf_attr(&scope, DW_AT_call_line, &attr), &callLine) == 0) {
        dwarf_formudata(dwarf_attr(&scope, DW_AT_call_column, &attr), &callColumn);
        if (files == nullptr && dwarf_getsrcfiles(&cu, &files, &fileCount) != 0) files = nullptr;
        const char* name = files != nullptr && callFile < fileCount ? dwarf_filesrc(files, callFile, nullptr, nullptr) : nullptr;
        location = SourceLocation{name != nullptr ? detail::sourcePath(name, detail::compDirOf(&cu)) : "",
                                  static_cast<int>(callLine), static_cast<int>(callColumn)};
      } else {
        location.reset();
      }
    }
    return out;
  }
  if (auto fn = useDwarf ? symbols.functionAt(fileAddress) : symbols.elfFunctionAt(fileAddress)) {
    base.function = fn->name;
    base.hasDebugInfo = fn->hasDebugInfo;
    base.scopeDie = fn->dieOffset;
    if (fn->hasDebugInfo) base.location = symbols.locationForAddress(fileAddress);
    if (!fn->hasDebugInfo) base.function = modules_.describe(pc);
  } else {
    base.function = modules_.describe(pc);
  }
  out.push_back(base);
  return out;
}

const std::vector<Frame>& StackView::expand(std::size_t i) {
  if (!expanded_[i]) {
    const RawFrame& raw = raw_[i];
    // Symbolization depends only on the pc (and whether it is a return address).
    std::uint64_t key = raw.lookupPc();
    auto it = byPc_.find(key);
    if (it == byPc_.end()) it = byPc_.emplace(key, symbolize(raw, i)).first;
    std::vector<Frame> frames = it->second;
    for (Frame& f : frames) {
      f.physicalIndex = i;
      f.pc = raw.pc;
    }
    expanded_[i] = std::move(frames);
  }
  return *expanded_[i];
}

std::size_t StackView::totalFrames() {
  std::size_t total = 0;
  for (std::size_t i = 0; i < raw_.size(); ++i) {
    // Without usable DWARF a physical frame is one frame: no need to name it to count it.
    if (!expanded_[i]) {
      const Module* m = modules_.moduleFor(raw_[i].lookupPc());
      if (m == nullptr || !m->symbols || !m->symbols->hasDebugInfo() || !m->symbols->dwarfCheap()) {
        ++total;
        continue;
      }
      // A pc seen before (recursion) counts as it did, without copying its frames.
      if (auto known = byPc_.find(raw_[i].lookupPc()); known != byPc_.end()) {
        total += known->second.size();
        continue;
      }
    }
    total += expand(i).size();
  }
  return total;
}

std::vector<Frame> StackView::frames(std::size_t start, std::size_t levels) {
  std::vector<Frame> out;
  std::size_t logical = 0;
  for (std::size_t i = 0; i < raw_.size() && out.size() < levels; ++i) {
    const auto& frames = expand(i);
    for (const Frame& f : frames) {
      if (logical >= start && out.size() < levels) out.push_back(f);
      ++logical;
    }
  }
  return out;
}

}  // namespace strata::native::symbols
