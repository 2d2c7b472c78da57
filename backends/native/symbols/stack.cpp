// Unwinding with libunwind-ptrace and symbolizing frames (inlined calls become frames of their own).
#include "strata/native/symbols/stack.hpp"

#include <libunwind-ptrace.h>

#include <sys/uio.h>

#include <array>
#include <cstdlib>
#include <cstring>
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
  if (as == nullptr) return Error{1, "unw_create_addr_space failed", true};
  // Unwind info is cached across unwinds of the same process: a 1000-deep stack looks up the
  // same few procedures again and again.
  unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
  self->addressSpace_ = as;
  return self;
}

RemoteUnwinder::~RemoteUnwinder() {
  if (addressSpace_ != nullptr) unw_destroy_addr_space(static_cast<unw_addr_space_t>(addressSpace_));
}

void RemoteUnwinder::flushCaches() { unw_flush_cache(static_cast<unw_addr_space_t>(addressSpace_), 0, 0); }

Result<std::vector<RawFrame>> RemoteUnwinder::unwind(pid_t tid, std::size_t maxFrames) {
  void* upt = _UPT_create(tid);
  if (upt == nullptr) return Error{1, "_UPT_create for thread " + std::to_string(tid) + " failed", true};
  UnwindArg arg;
  arg.upt = upt;
  arg.pid = tid;
  struct Scope {
    explicit Scope(UnwindArg* a) { t_current = a; }
    ~Scope() { t_current = nullptr; }
  } scope(&arg);
  unw_cursor_t cursor;
  int rc = unw_init_remote(&cursor, static_cast<unw_addr_space_t>(addressSpace_), &arg);
  if (rc < 0) {
    _UPT_destroy(upt);
    return Error{1, "unw_init_remote for thread " + std::to_string(tid) + ": " + unw_strerror(rc), true};
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
  if (frames.empty()) return Error{1, "thread " + std::to_string(tid) + " has no frames to unwind", true};
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
  if (symbols.hasDebugInfo() && symbols.cuForAddress(fileAddress, &cu)) scopes = symbols.scopesAt(fileAddress);
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
        location = SourceLocation{name != nullptr ? name : "", static_cast<int>(callLine), static_cast<int>(callColumn)};
      } else {
        location.reset();
      }
    }
    return out;
  }
  if (auto fn = symbols.functionAt(fileAddress)) {
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
  for (std::size_t i = 0; i < raw_.size(); ++i) total += expand(i).size();
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
