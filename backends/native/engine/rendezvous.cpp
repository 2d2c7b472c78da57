// Shared libraries: follows the dynamic linker's r_debug/link_map rendezvous and reports changes.
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "engine_impl.hpp"
#include "strata/elf_file.hpp"
#include "strata/proc_maps.hpp"

namespace strata::native::engine {

namespace {

struct Auxv {
  std::uint64_t phdr = 0, phnum = 0, base = 0, entry = 0;
};

Result<Auxv> readAuxv(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/auxv";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errnoError(errors::kSystemCallFailed, "open " + path);
  Auxv aux;
  std::uint64_t pair[2];
  for (;;) {
    ssize_t n = read(fd, pair, sizeof pair);
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof pair || pair[0] == AT_NULL) break;
    if (pair[0] == AT_PHDR) aux.phdr = pair[1];
    if (pair[0] == AT_PHNUM) aux.phnum = pair[1];
    if (pair[0] == AT_BASE) aux.base = pair[1];
    if (pair[0] == AT_ENTRY) aux.entry = pair[1];
  }
  close(fd);
  if (!aux.phdr) return Error{errors::kObjectUnreadable, "read " + path + ": no AT_PHDR entry", true};
  return aux;
}

// What the engine needs from the dynamic linker's file: its dynamic section's link-time
// address and the two rendezvous symbols (exported in its .dynsym by glibc).
struct InterpFacts {
  std::uint64_t dynamic = 0, debugState = 0, rDebug = 0;
};

Result<InterpFacts> readInterp(const std::string& path) {
  auto file = ElfFile::open(path, ELF_C_READ);
  if (!file) return file.takeError();
  Elf* elf = file->elf();
  InterpFacts facts;
  std::size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  for (std::size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_DYNAMIC) facts.dynamic = ph.p_vaddr;
  }
  forEachSymbol(elf, [&facts](const char* name, const GElf_Sym& sym) {
    if (std::strcmp(name, "_dl_debug_state") == 0) facts.debugState = sym.st_value;
    if (std::strcmp(name, "_r_debug") == 0) facts.rDebug = sym.st_value;
  });
  return facts;
}

// The file /proc/PID/maps shows mapped at that address; empty when none.
std::string fileMappedAt(pid_t pid, std::uint64_t address) {
  auto maps = readMappings(pid);
  if (!maps) return {};
  for (const auto& m : *maps)
    if (address >= m.start && address < m.end) return m.file() ? m.path : std::string();
  return {};
}

std::string readLink(const std::string& path) {
  char buf[4096];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

// The executable's and the dynamic linker's LoadedObject from the auxiliary vector and the
// program headers in memory; works before the dynamic linker has run a single instruction.
static Result<void> describeImage(Engine::Impl& impl, Process& proc, const Auxv& aux) {
  std::vector<Elf64_Phdr> phdrs(aux.phnum);
  if (auto r = impl.readRaw(aux.phdr, phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr)); !r) return r;
  std::uint64_t bias = 0;
  bool haveBias = false;
  for (auto& ph : phdrs)
    if (ph.p_type == PT_PHDR) {
      bias = aux.phdr - ph.p_vaddr;
      haveBias = true;
    }
  if (!haveBias)  // no PT_PHDR: the headers follow the ELF header in the first segment
    for (auto& ph : phdrs)
      if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
        bias = aux.phdr - sizeof(Elf64_Ehdr) - ph.p_vaddr;
        break;
      }
  LoadedObject exe{readLink("/proc/" + std::to_string(proc.pid) + "/exe"), bias, 0};
  std::string interp;
  for (auto& ph : phdrs) {
    if (ph.p_type == PT_DYNAMIC) exe.dynamicAddress = bias + ph.p_vaddr;
    if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < 4096) {
      std::string text(ph.p_filesz, '\0');
      if (impl.readRaw(bias + ph.p_vaddr, text.data(), text.size())) interp = text.c_str();
    }
  }
  proc.objects = {exe};
  if (aux.base && !interp.empty()) {
    auto facts = readInterp(interp);
    if (!facts) return facts.takeError();
    proc.interpBase = aux.base;
    proc.interpPath = interp;
    proc.objects.push_back(LoadedObject{interp, aux.base, aux.base + facts->dynamic});
    if (facts->debugState) proc.rBrk = aux.base + facts->debugState;
    if (facts->rDebug) proc.rDebug = aux.base + facts->rDebug;
  } else if (interp.empty() && !aux.base && exe.dynamicAddress) {
    // Started as `ld.so PROGRAM`: the executable is the dynamic linker itself, and its own
    // rendezvous lists the program and its libraries.
    if (auto facts = readInterp(exe.path); facts && facts->rDebug) {
      if (facts->debugState) proc.rBrk = bias + facts->debugState;
      proc.rDebug = bias + facts->rDebug;
    }
  }
  return {};
}

Result<void> Engine::Impl::initRendezvousAtExec() {
  auto aux = readAuxv(proc->pid);
  if (!aux) return aux.takeError();
  if (auto r = describeImage(*this, *proc, *aux); !r) return r;
  ++quiesced;
  sink.onLibraries(LibraryEvent{proc->pid, proc->objects, {}});
  --quiesced;
  if (!proc || !proc->rBrk) return {};  // static executable: nothing will ever load
  auto site = acquireSite(proc->rBrk);
  if (!site) return site.takeError();
  (*site)->rendezvous = true;
  return syncSite(proc->rBrk);
}

Result<void> Engine::Impl::initRendezvousAttached() {
  auto aux = readAuxv(proc->pid);
  if (!aux) return aux.takeError();
  if (auto r = describeImage(*this, *proc, *aux); !r) return r;
  if (!proc->rDebug && proc->objects[0].dynamicAddress) {
    // No _r_debug symbol: the executable's DT_DEBUG, filled in by the dynamic linker.
    for (std::uint64_t at = proc->objects[0].dynamicAddress;; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn dyn;
      if (!readRaw(at, &dyn, sizeof dyn) || dyn.d_tag == DT_NULL) break;
      if (dyn.d_tag == DT_DEBUG) proc->rDebug = dyn.d_un.d_ptr;
    }
  }
  std::vector<LoadedObject> base = proc->objects;
  ++quiesced;
  sink.onLibraries(LibraryEvent{proc->pid, base, {}});
  --quiesced;
  if (!proc || !proc->rDebug) return {};
  r_debug rd{};
  if (auto r = readRaw(proc->rDebug, &rd, sizeof rd); !r) return r;
  if (rd.r_brk) proc->rBrk = rd.r_brk;
  if (proc->rBrk) {
    auto site = acquireSite(proc->rBrk);
    if (!site) return site.takeError();
    (*site)->rendezvous = true;
    if (auto r = syncSite(proc->rBrk); !r) return r;
  }
  return onRendezvous();
}

Result<void> Engine::Impl::onRendezvous() {
  if (!proc || !proc->rDebug) return {};
  r_debug rd{};
  if (auto r = readRaw(proc->rDebug, &rd, sizeof rd); !r) return r;
  // RT_ADD/RT_DELETE announce a change in progress; the list is only whole at RT_CONSISTENT.
  if (rd.r_state != r_debug::RT_CONSISTENT) return {};
  std::vector<LoadedObject> now;
  int guard = 0;
  for (auto at = reinterpret_cast<std::uint64_t>(rd.r_map); at && guard < 100000; ++guard) {
    link_map lm{};
    if (auto r = readRaw(at, &lm, sizeof lm); !r) return r;
    std::string name;
    if (lm.l_name) {
      char buf[512];
      for (std::uint64_t p = reinterpret_cast<std::uint64_t>(lm.l_name);; p += sizeof buf) {
        if (!readMemory(p, buf, sizeof buf)) break;
        std::size_t len = strnlen(buf, sizeof buf);
        name.append(buf, len);
        if (len < sizeof buf || name.size() > 4096) break;
      }
    }
    // The executable has an empty name, the vDSO a bare one: neither is a file to load. A
    // program started as `ld.so PROGRAM` is the exception: an empty name that is not the
    // executable's (the dynamic linker's), found by the file mapped where its dynamic section is.
    if (name.empty() && lm.l_ld && !proc->objects.empty() &&
        reinterpret_cast<std::uint64_t>(lm.l_ld) != proc->objects[0].dynamicAddress)
      name = fileMappedAt(proc->pid, reinterpret_cast<std::uint64_t>(lm.l_ld));
    if (name.find('/') != std::string::npos)
      now.push_back(LoadedObject{name, lm.l_addr, reinterpret_cast<std::uint64_t>(lm.l_ld)});
    at = reinterpret_cast<std::uint64_t>(lm.l_next);
  }
  auto same = [](const LoadedObject& a, const LoadedObject& b) { return a.dynamicAddress == b.dynamicAddress; };
  LibraryEvent ev{proc->pid, {}, {}};
  for (auto& o : now) {
    bool known = std::any_of(proc->objects.begin(), proc->objects.end(), [&](auto& k) { return same(k, o); });
    if (!known) ev.added.push_back(o);
  }
  std::vector<LoadedObject> kept;
  for (std::size_t i = 0; i < proc->objects.size(); ++i) {
    auto& k = proc->objects[i];
    bool stays = i < 2 || std::any_of(now.begin(), now.end(), [&](auto& o) { return same(k, o); });
    if (stays) kept.push_back(k);
    else ev.removed.push_back(k);
  }
  if (ev.added.empty() && ev.removed.empty()) return {};
  kept.insert(kept.end(), ev.added.begin(), ev.added.end());
  proc->objects = std::move(kept);
  flushAllRegs();
  ++quiesced;
  sink.onLibraries(ev);
  --quiesced;
  return {};
}

}  // namespace strata::native::engine
