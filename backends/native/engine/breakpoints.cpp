// Software breakpoints: shared int3 sites, hits and their conditions, step-over, step-out.
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>

#include "engine_impl.hpp"
#include "strata/hex.hpp"

namespace strata::native::engine {

namespace {

constexpr std::uint8_t kInt3 = 0xCC;

}  // namespace

Result<BreakpointSite*> Engine::Impl::acquireSite(std::uint64_t address) {
  auto it = proc->sites.find(address);
  if (it != proc->sites.end()) return &it->second;
  std::uint8_t original = 0;
  if (auto r = readRaw(address, &original, 1); !r)
    return Error{r.error().id, "breakpoint at " + hexAddress(address) + ": " + r.error().message, true};
  BreakpointSite& site = proc->sites[address];
  site.address = address;
  site.original = original;
  return &site;
}

Result<void> Engine::Impl::syncSite(std::uint64_t address) {
  auto it = proc->sites.find(address);
  if (it == proc->sites.end()) return {};
  BreakpointSite& site = it->second;
  if (site.wanted() && !site.inserted) {
    if (auto r = writeRaw(address, &kInt3, 1); !r)
      return Error{r.error().id, "insert breakpoint at " + hexAddress(address) + ": " + r.error().message, true};
    site.inserted = true;
    siteChanged(address, site.original);
  } else if (!site.wanted() && site.inserted) {
    if (auto r = writeRaw(address, &site.original, 1); !r)
      return Error{r.error().id, "remove breakpoint at " + hexAddress(address) + ": " + r.error().message, true};
    site.inserted = false;
    siteChanged(address, -1);
  }
  if (!site.wanted()) proc->sites.erase(it);
  return {};
}

Result<BreakpointId> Engine::Impl::doAddBreakpoint(std::uint64_t address, const StopPredicate& condition) {
  BreakpointId id = 0;
  auto r = withStopped([&]() -> Result<void> {
    auto site = acquireSite(address);
    if (!site) return site.takeError();
    id = nextBreakpointId++;
    UserBreakpoint& bp = proc->breakpoints[id];
    bp.id = id;
    bp.address = address;
    bp.condition = condition;
    (*site)->users.push_back(id);
    if (auto s = syncSite(address); !s) {
      proc->breakpoints.erase(id);
      if (auto it = proc->sites.find(address); it != proc->sites.end()) {
        std::erase(it->second.users, id);
        if (!it->second.wanted()) proc->sites.erase(it);
      }
      return s;
    }
    return {};
  });
  if (!r) return r.takeError();
  return id;
}

Result<void> Engine::Impl::doRemoveBreakpoint(BreakpointId id) {
  return withStopped([&]() -> Result<void> {
    auto it = proc->breakpoints.find(id);
    if (it == proc->breakpoints.end()) return Error{errors::kNoSuchBreakpoint, "no breakpoint " + std::to_string(id), true};
    std::uint64_t address = it->second.address;
    proc->breakpoints.erase(it);
    if (auto site = proc->sites.find(address); site != proc->sites.end()) std::erase(site->second.users, id);
    return syncSite(address);
  });
}

Result<void> Engine::Impl::doEnableBreakpoint(BreakpointId id, bool enabled) {
  return withStopped([&]() -> Result<void> {
    auto it = proc->breakpoints.find(id);
    if (it == proc->breakpoints.end()) return Error{errors::kNoSuchBreakpoint, "no breakpoint " + std::to_string(id), true};
    UserBreakpoint& bp = it->second;
    if (bp.enabled == enabled) return {};
    auto site = acquireSite(bp.address);
    if (!site) return site.takeError();
    auto& users = (*site)->users;
    if (enabled) users.push_back(id);
    else std::erase(users, id);
    bp.enabled = enabled;
    return syncSite(bp.address);
  });
}

Outcome Engine::Impl::onTrap(Thread& thread) {
  auto r = regs(thread);
  if (!r) return Outcome::Handled;
  std::uint64_t pc = (*r)->rip - 1;
  auto it = proc->sites.find(pc);
  if (it == proc->sites.end() || !it->second.inserted) {
    // An int3 the program itself contains: stop as gdb does, but deliver nothing (SIGTRAP
    // would kill it).
    EngineStop ev = stopOf(EngineStopReason::Exception);
    ev.signal.signo = SIGTRAP;
    ev.signal.code = SI_KERNEL;
    ev.signal.description = "SIGTRAP: breakpoint instruction in the program at " + hexAddress(pc);
    queueStop(thread, std::move(ev));
    return Outcome::Report;
  }
  if (auto s = setPc(thread, pc); !s) return Outcome::Handled;
  thread.atSite = pc;
  BreakpointSite& site = it->second;
  if (site.rendezvous) {
    proc->rendezvousPending = true;
    proc->rendezvousTid = thread.tid;
  }

  EngineStop ev = stopOf(EngineStopReason::Breakpoint);
  if (!site.users.empty()) {
    ThreadRegisters snapshot;
    snapshot.tid = thread.tid;
    snapshot.gpr = thread.regs;
    // Copy: a condition may add or remove breakpoints, which edits site.users.
    std::vector<BreakpointId> users = site.users;
    for (BreakpointId id : users) {
      auto bp = proc->breakpoints.find(id);
      if (bp == proc->breakpoints.end() || !bp->second.enabled) continue;
      std::uint64_t hits = ++bp->second.hits;
      bool stop = true;
      if (bp->second.condition) {
        HitContext ctx{thread.tid, id, pc, hits, &snapshot, &memory};
        // Conditions run with the hitting thread stopped and others possibly running: they
        // may read memory and registers; engine calls they make run inline.
        ++quiesced;
        stop = bp->second.condition(ctx);
        --quiesced;
        if (!proc) return Outcome::Gone;  // the condition killed or detached the process
        if (!findThread(snapshot.tid)) return Outcome::Gone;
      }
      if (stop) ev.breakpoints.push_back(id);
    }
  }
  auto& plan = proc->stepOut;
  if (ev.breakpoints.empty() && plan && plan->address == pc && plan->tid == thread.tid &&
      thread.regs.rsp >= plan->stackPointer) {
    if (proc->range && proc->range->tid == thread.tid) {
      proc->rangeResume = true;  // a call stepped over by stepRange is back: step on
      return Outcome::StepOver;
    }
    ev.reason = EngineStopReason::StepOut;
  } else if (ev.breakpoints.empty()) {
    return Outcome::StepOver;
  }
  queueStop(thread, std::move(ev));
  return Outcome::Report;
}

// The instructions that open most functions (where breakpoints mostly sit) are run here
// instead of lifting the int3 and single-stepping: one stop per hit instead of two.
bool Engine::Impl::emulateAtSite(Thread& thread, const BreakpointSite& site) {
  for (auto& w : proc->watch)
    if (w.used) return false;  // an emulated stack write would not fire a watchpoint
  std::uint8_t code[12] = {site.original};
  if (!readMemory(site.address + 1, code + 1, sizeof code - 1) && !readMemory(site.address + 1, code + 1, 3))
    return false;
  user_regs_struct& r = thread.regs;
  using Reg = unsigned long long;  // user_regs_struct's field type
  auto push = [&](Reg value, Reg length) {
    if (!writeRaw(r.rsp - 8, &value, sizeof value)) return false;
    r.rsp -= 8;
    r.rip += length;
    return true;
  };
  Reg* low[8] = {&r.rax, &r.rcx, &r.rdx, &r.rbx, &r.rsp, &r.rbp, &r.rsi, &r.rdi};
  Reg* high[8] = {&r.r8, &r.r9, &r.r10, &r.r11, &r.r12, &r.r13, &r.r14, &r.r15};
  bool done = false;
  if (code[0] >= 0x50 && code[0] <= 0x57) {
    done = push(*low[code[0] - 0x50], 1);  // push %reg
  } else if (code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57) {
    done = push(*high[code[1] - 0x50], 2);  // push %r8..%r15
  } else if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa) {
    r.rip += 4;  // endbr64
    done = true;
  } else if (code[0] == 0x90) {
    r.rip += 1;  // nop
    done = true;
  } else if (code[0] == 0x48 && code[1] == 0x89 && code[2] == 0xe5) {
    r.rbp = r.rsp;  // mov %rsp,%rbp
    r.rip += 3;
    done = true;
  }
  if (!done) done = emulateMove(r, site.address, code);
  if (done) {
    thread.regsDirty = true;
    ++stepOvers.emulated;
  }
  return done;
}

// The moves that open most lines of unoptimized code: a register loaded from or stored to a
// local ([rbp + disp]) or a global ([rip + disp32]), or an immediate stored there. Emulated
// with one memory access instead of lifting the int3 and single-stepping (two stops).
bool Engine::Impl::emulateMove(user_regs_struct& r, std::uint64_t address, const std::uint8_t* code) {
  using Reg = unsigned long long;
  Reg* gpr[16] = {&r.rax, &r.rcx, &r.rdx, &r.rbx, &r.rsp, &r.rbp, &r.rsi, &r.rdi,
                  &r.r8,  &r.r9,  &r.r10, &r.r11, &r.r12, &r.r13, &r.r14, &r.r15};
  std::size_t at = 0;
  std::uint8_t rex = 0;
  if ((code[0] & 0xf0) == 0x40) rex = code[at++];
  if (rex & 0x03) return false;  // REX.X/REX.B: an index or base we do not decode
  std::uint8_t opcode = code[at++];
  if (opcode != 0x8b && opcode != 0x89 && opcode != 0xc7) return false;
  std::uint8_t modrm = code[at++];
  int mod = modrm >> 6, reg = ((modrm >> 3) & 7) | ((rex & 0x04) << 1), rm = modrm & 7;
  if (rm != 5 || mod == 3) return false;  // only [rip + disp32], [rbp + disp8], [rbp + disp32]
  if (opcode == 0xc7 && (reg & 7) != 0) return false;
  std::int64_t disp = 0;
  if (mod == 1) {
    disp = static_cast<std::int8_t>(code[at]);
    at += 1;
  } else {
    std::int32_t d = 0;
    std::memcpy(&d, code + at, 4);
    disp = d;
    at += 4;
  }
  std::int32_t imm = 0;
  if (opcode == 0xc7) {
    std::memcpy(&imm, code + at, 4);
    at += 4;
  }
  std::uint64_t next = address + at;
  std::uint64_t ea = (mod == 0 ? next : r.rbp) + static_cast<std::uint64_t>(disp);
  std::size_t size = (rex & 0x08) ? 8 : 4;
  if (opcode == 0x8b) {
    std::uint64_t value = 0;  // a 32-bit load zero-extends
    if (!readMemory(ea, &value, size)) return false;
    *gpr[reg] = value;
  } else {
    std::uint64_t value = opcode == 0x89 ? *gpr[reg] : static_cast<std::uint64_t>(static_cast<std::int64_t>(imm));
    // process_vm_writev honours page protections (unlike /proc/PID/mem): a store to a
    // read-only page is left to the instruction itself, which then faults as it should.
    iovec local{&value, size};
    iovec remote{reinterpret_cast<void*>(ea), size};
    if (process_vm_writev(proc->pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(size)) return false;
  }
  r.rip = next;
  return true;
}

Result<Outcome> Engine::Impl::stepOverSite(Thread& thread) {
  pid_t tid = thread.tid;
  auto pc = regs(thread);
  if (!pc) return pc.takeError();
  std::uint64_t address = (*pc)->rip;
  auto it = proc->sites.find(address);
  if (it == proc->sites.end() || !it->second.inserted) return singleStep(thread);
  if (emulateAtSite(thread, it->second)) {
    thread.atSite = 0;
    return Outcome::Trap;
  }
  // Every other thread is stopped (all-stop), so none can run past the lifted byte.
  if (auto r = writeRaw(address, &it->second.original, 1); !r) return r.takeError();
  it->second.inserted = false;
  ++stepOvers.singleStepped;
  auto outcome = singleStep(thread);
  if (!proc) return outcome;
  if (auto site = proc->sites.find(address); site != proc->sites.end() && site->second.wanted()) {
    if (auto r = writeRaw(address, &kInt3, 1); !r) return r.takeError();
    site->second.inserted = true;
  }
  if (Thread* t = findThread(tid)) t->atSite = 0;
  return outcome;
}

void Engine::Impl::cancelStepOut() {
  if (!proc || !proc->stepOut) return;
  std::uint64_t address = proc->stepOut->address;
  proc->stepOut.reset();
  if (auto it = proc->sites.find(address); it != proc->sites.end()) {
    it->second.stepOut = false;
    (void)syncSite(address);
  }
}

Result<void> Engine::Impl::doStepOut(pid_t tid, std::optional<ReturnTarget> target) {
  if (auto r = requireStopped(); !r) return r;
  Thread* t = findThread(tid);
  if (!t) return Error{errors::kNoSuchThread, "step out: no thread " + std::to_string(tid), true};
  auto rr = regs(*t);
  if (!rr) return rr.takeError();
  const user_regs_struct g = **rr;
  if (!target) {
    // Without an unwinder: the frame-pointer chain, or the raw stack at a function's first
    // instructions where rbp still belongs to the caller.
    std::uint8_t code[8] = {};
    if (auto r = readMemory(g.rip, code, sizeof code); !r) return r;
    bool endbr = code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa;
    const std::uint8_t* at = endbr ? code + 4 : code;
    bool atEntry = at[0] == 0x55;  // push %rbp
    bool afterPush = at[0] == 0x48 && at[1] == 0x89 && at[2] == 0xe5;  // mov %rsp,%rbp
    std::uint64_t slot = atEntry ? g.rsp : afterPush ? g.rsp + 8 : g.rbp + 8;
    std::uint64_t ret = 0;
    if (auto r = readMemory(slot, &ret, sizeof ret); !r) return r;
    target = ReturnTarget{ret, slot + 8};
  }
  cancelStepOut();
  auto site = acquireSite(target->returnAddress);
  if (!site) return site.takeError();
  (*site)->stepOut = true;
  if (auto r = syncSite(target->returnAddress); !r) return r;
  proc->stepOut = StepOutPlan{tid, target->returnAddress, target->stackPointerAfterReturn};
  return resumeAll();
}

Result<void> Engine::Impl::removeAllSites() {
  Result<void> result;
  for (auto& [address, site] : proc->sites) {
    if (!site.inserted) continue;
    if (auto r = writeRaw(address, &site.original, 1); !r && result) result = r;
    site.inserted = false;
  }
  proc->sites.clear();
  siteChanged(0, -2);
  proc->breakpoints.clear();
  proc->stepOut.reset();
  return result;
}

}  // namespace strata::native::engine
