// CoreFile: an ELF core mapped read-only and parsed once: its notes (threads, signal, process,
// mapped files), its segments (the memory dumped), and the files it names for the rest.
#include "strata/core/core_file.hpp"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "strata/hex.hpp"
#include "strata/native/engine/signals.hpp"
#include "strata/native/symbols/fault_access.hpp"
#include "strata/native/symbols/loaded_objects.hpp"

namespace strata::core {

namespace {

constexpr std::uint32_t kNtFile = 0x46494c45;     // NT_FILE
constexpr std::uint32_t kNtSiginfo = 0x53494749;  // NT_SIGINFO

std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

// Calls fn(type, name, desc, descSize) for each note in [p, p+size).
template <class Fn>
void forEachNote(const unsigned char* p, std::size_t size, Fn fn) {
  std::size_t at = 0;
  while (at + sizeof(Elf64_Nhdr) <= size) {
    Elf64_Nhdr h;
    std::memcpy(&h, p + at, sizeof h);
    std::size_t nameAt = at + sizeof h;
    std::size_t descAt = nameAt + align4(h.n_namesz);
    if (descAt > size || h.n_descsz > size - descAt) return;
    std::string name(reinterpret_cast<const char*>(p + nameAt), h.n_namesz ? h.n_namesz - 1 : 0);
    fn(h.n_type, name, p + descAt, static_cast<std::size_t>(h.n_descsz));
    at = descAt + align4(h.n_descsz);
  }
}

std::string cString(const char* text, std::size_t max) {
  return std::string(text, strnlen(text, max));
}

// The GNU build id of an ELF image whose bytes `at(offset, size)` gives (file offsets for a
// file; for the image in memory, addresses relative to its first page, as the note segment's
// vaddr minus the first segment's says). Empty when none is found.
template <class ReadAt>
std::string buildId(ReadAt at, bool inMemory) {
  Elf64_Ehdr eh;
  if (!at(0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return {};
  std::uint64_t firstVaddr = UINT64_MAX;
  std::vector<Elf64_Phdr> phdrs;
  for (unsigned i = 0; i < eh.e_phnum && i < 64; ++i) {
    Elf64_Phdr ph;
    if (!at(eh.e_phoff + std::uint64_t{i} * eh.e_phentsize, &ph, sizeof ph)) return {};
    if (ph.p_type == PT_LOAD) firstVaddr = std::min<std::uint64_t>(firstVaddr, ph.p_vaddr & ~0xfffULL);
    phdrs.push_back(ph);
  }
  for (const auto& ph : phdrs) {
    if (ph.p_type != PT_NOTE || ph.p_filesz > 4096) continue;
    std::vector<unsigned char> notes(ph.p_filesz);
    std::uint64_t from = inMemory ? ph.p_vaddr - (firstVaddr == UINT64_MAX ? 0 : firstVaddr) : ph.p_offset;
    if (!at(from, notes.data(), notes.size())) continue;
    std::string id;
    forEachNote(notes.data(), notes.size(), [&](std::uint32_t type, const std::string& name, const unsigned char* d, std::size_t n) {
      if (type == NT_GNU_BUILD_ID && name == "GNU")
        for (std::size_t i = 0; i < n; ++i) id += "0123456789abcdef"[d[i] >> 4], id += "0123456789abcdef"[d[i] & 15];
    });
    if (!id.empty()) return id;
  }
  return {};
}

std::string withoutDeleted(const std::string& path) {
  static const std::string kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
    return path.substr(0, path.size() - kDeleted.size());
  return path;
}

}  // namespace

Result<std::unique_ptr<CoreFile>> CoreFile::open(const std::string& path, const CoreOptions& options) {
  std::unique_ptr<CoreFile> core(new CoreFile());
  core->path_ = path;
  core->sysroot_ = options.sysroot;
  while (core->sysroot_.size() > 1 && core->sysroot_.back() == '/') core->sysroot_.pop_back();
  core->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (core->fd_ < 0) return errnoError(errors::kCoreUnreadable, "open core file " + path);
  struct stat st{};
  if (fstat(core->fd_, &st) != 0) return errnoError(errors::kCoreUnreadable, "stat core file " + path);
  if (!S_ISREG(st.st_mode)) return Error{errors::kCoreUnreadable, path + " is not a regular file", true};
  core->size_ = static_cast<std::uint64_t>(st.st_size);
  if (core->size_ < sizeof(Elf64_Ehdr))
    return Error{errors::kNotACore, path + " is not a core file: it has " + std::to_string(core->size_) + " bytes, fewer than an ELF header", true};
  void* m = mmap(nullptr, core->size_, PROT_READ, MAP_PRIVATE, core->fd_, 0);
  if (m == MAP_FAILED) return errnoError(errors::kCoreUnreadable, "map core file " + path);
  core->data_ = static_cast<const unsigned char*>(m);
  if (auto r = core->parse(options); !r) return r.takeError();
  return core;
}

CoreFile::~CoreFile() {
  for (auto& f : files_)
    if (f.data) munmap(const_cast<unsigned char*>(f.data), f.size);
  if (data_) munmap(const_cast<unsigned char*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

Result<void> CoreFile::parse(const CoreOptions& options) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, data_, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return Error{errors::kNotACore, path_ + " is not a core file: it is not an ELF file", true};
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
    return Error{errors::kNotACore, path_ + " is a core of another machine (ELF machine " + std::to_string(eh.e_machine) +
                                        "): Strata reads x86-64 cores", true};
  if (eh.e_type != ET_CORE) {
    const char* what = eh.e_type == ET_EXEC ? "an executable" : eh.e_type == ET_DYN ? "a shared object or PIE executable"
                       : eh.e_type == ET_REL ? "an object file" : "an ELF file of another kind";
    return Error{errors::kNotACore, path_ + " is " + what + ", not a core file", true};
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size_ ||
      std::uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr) > size_ - eh.e_phoff)
    return Error{errors::kNotACore, path_ + " is truncated: its program headers are cut (" + std::to_string(size_) + " bytes)", true};
  std::uint64_t missingBytes = 0;
  std::size_t cutSegments = 0;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, data_ + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_NOTE) {
      if (ph.p_offset >= size_) continue;
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(ph.p_filesz, size_ - ph.p_offset));
      forEachNote(data_ + ph.p_offset, n, [&](std::uint32_t type, const std::string& name, const unsigned char* d, std::size_t sz) {
        if (name == "CORE" || name == "LINUX") parseNote(type, d, sz);
      });
    } else if (ph.p_type == PT_LOAD) {
      Segment s{ph.p_vaddr, ph.p_memsz, ph.p_filesz, ph.p_offset, ph.p_flags};
      if (s.offset >= size_ ? s.filesz : s.filesz > size_ - s.offset) {
        std::uint64_t have = s.offset >= size_ ? 0 : size_ - s.offset;
        missingBytes += s.filesz - have;
        ++cutSegments;
        s.filesz = have;
      }
      segments_.push_back(s);
    }
  }
  if (cutSegments)
    problems_.push_back("the core is truncated: " + std::to_string(missingBytes) + " bytes of " + std::to_string(cutSegments) +
                        " memory segments are missing (a disk that filled, a size limit, a copy cut short); reads there fail");
  std::sort(segments_.begin(), segments_.end(), [](const Segment& a, const Segment& b) { return a.vaddr < b.vaddr; });
  if (threads_.empty()) return Error{errors::kNotACore, path_ + " holds no thread (no NT_PRSTATUS note): not a process core", true};
  // The kernel gives every thread the signal in pr_cursig; the one that took it comes first.
  for (std::size_t i = 1; i < threads_.size(); ++i) threads_[i].signal = 0;
  // The executable: the mapping of the entry point, else the program given.
  for (const auto& mp : mappings_)
    if (entry_ && mp.start <= entry_ && entry_ < mp.end) executable_ = withoutDeleted(mp.path);
  if (executable_.empty() && !options.program.empty()) executable_ = options.program;
  if (!options.program.empty()) program_ = options.program;
  objects_ = native::symbols::loadedObjectsFromMappings(mappings_, [this](const std::string& p) { return localPath(p); });
  nameFromLinkMap();
  checkFiles();
  // What failed, read or write: the crashing thread's instruction, now that code can be read.
  if (signal_ && signal_->signo == SIGSEGV && threads_.front().signal == signal_->signo) {
    auto site = native::symbols::faultSite(*this, threads_.front().registers, signal_->address);
    signal_->description = native::symbols::describeFault(signal_->signo, signal_->code, signal_->address, site, signal_->description);
  }
  return {};
}

void CoreFile::parseNote(std::uint32_t type, const unsigned char* d, std::size_t size) {
  switch (type) {
    case NT_PRSTATUS: {
      if (size < sizeof(elf_prstatus)) return;
      elf_prstatus st;
      std::memcpy(&st, d, sizeof st);
      CoreThread t;
      t.registers.tid = st.pr_pid;
      static_assert(sizeof(st.pr_reg) == sizeof(user_regs_struct));
      std::memcpy(&t.registers.gpr, &st.pr_reg, sizeof t.registers.gpr);
      t.signal = st.pr_cursig;
      threads_.push_back(t);
      break;
    }
    case NT_FPREGSET:
      if (!threads_.empty() && size >= sizeof(user_fpregs_struct)) {
        std::memcpy(&threads_.back().registers.fpr, d, sizeof(user_fpregs_struct));
        threads_.back().registers.hasFpr = true;
      }
      break;
    case NT_PRPSINFO: {
      if (size < sizeof(elf_prpsinfo)) return;
      elf_prpsinfo ps;
      std::memcpy(&ps, d, sizeof ps);
      pid_ = ps.pr_pid;
      command_ = cString(ps.pr_fname, sizeof ps.pr_fname);
      arguments_ = cString(ps.pr_psargs, sizeof ps.pr_psargs);
      while (!arguments_.empty() && arguments_.back() == ' ') arguments_.pop_back();
      break;
    }
    case NT_AUXV:
      for (std::size_t at = 0; at + 16 <= size; at += 16) {
        std::uint64_t key = 0, value = 0;
        std::memcpy(&key, d + at, 8);
        std::memcpy(&value, d + at + 8, 8);
        if (key == AT_ENTRY) entry_ = value;
      }
      break;
    case kNtSiginfo: {
      if (size < sizeof(siginfo_t)) return;
      siginfo_t si;
      std::memcpy(&si, d, sizeof si);
      CoreSignal s;
      s.signo = si.si_signo;
      s.code = si.si_code;
      bool fault = si.si_signo == SIGSEGV || si.si_signo == SIGBUS || si.si_signo == SIGFPE || si.si_signo == SIGILL;
      if (fault && si.si_code > 0) s.address = reinterpret_cast<std::uint64_t>(si.si_addr);
      s.description = native::engine::describeSignal(s.signo, s.code, s.address);
      signal_ = s;
      break;
    }
    case kNtFile: {
      if (size < 16) return;
      std::uint64_t count = 0, pageSize = 0;
      std::memcpy(&count, d, 8);
      std::memcpy(&pageSize, d + 8, 8);
      if (count > (size - 16) / 24) return;
      const char* names = reinterpret_cast<const char*>(d + 16 + count * 24);
      const char* end = reinterpret_cast<const char*>(d + size);
      for (std::uint64_t i = 0; i < count && names < end; ++i) {
        std::uint64_t e[3];
        std::memcpy(e, d + 16 + i * 24, 24);
        std::string name(names, strnlen(names, static_cast<std::size_t>(end - names)));
        names += name.size() + 1;
        Mapping mp;
        mp.start = e[0];
        mp.end = e[1];
        mp.offset = e[2] * pageSize;
        mp.perms = "r--p";
        mp.path = name;
        mappings_.push_back(std::move(mp));
      }
      break;
    }
    default:
      break;
  }
}

// The dynamic linker's names for the libraries (libffi.so.8, not the file it links to), as a
// live session shows them: from r_debug's link map in the core's memory, found through the
// executable's DT_DEBUG. Each object keeps its file when the name does not lead to it.
void CoreFile::nameFromLinkMap() {
  std::string exe = localPath(executable_);
  std::size_t size = 0;
  const unsigned char* bytes = executable_.empty() ? nullptr : mappedFileBytes(exe, size);
  const native::LoadedObject* main = nullptr;
  for (const auto& o : objects_)
    if (o.path == exe) main = &o;
  if (!bytes || !main || size < sizeof(Elf64_Ehdr)) return;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes, sizeof eh);
  std::uint64_t dynamic = 0;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (eh.e_phoff + (i + 1) * sizeof ph > size) return;
    std::memcpy(&ph, bytes + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_DYNAMIC) dynamic = main->loadBias + ph.p_vaddr;
  }
  if (!dynamic) return;  // statically linked: no link map
  std::uint64_t rDebug = 0;
  for (int i = 0; i < 512; ++i) {
    Elf64_Dyn d;
    if (!read(dynamic + i * sizeof d, &d, sizeof d) || d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_DEBUG) rDebug = d.d_un.d_ptr;
  }
  std::uint64_t map = 0;
  if (!rDebug || !read(rDebug + 8, &map, 8)) return;  // r_version, then r_map
  for (int n = 0; map && n < 4096; ++n) {
    std::uint64_t lm[5] = {};  // l_addr, l_name, l_ld, l_next, l_prev
    if (!read(map, lm, sizeof lm)) return;
    char name[4096];
    std::size_t got = lm[1] ? readPrefix(lm[1], name, sizeof name - 1) : 0;
    name[got] = '\0';
    std::string linked(name, strnlen(name, got));
    if (!linked.empty() && linked[0] == '/' && lm[2]) {
      for (const auto& mp : mappings_) {
        if (mp.start > lm[2] || lm[2] >= mp.end) continue;
        std::string file = localPath(mp.path), alias = localPath(linked);
        struct stat a{}, b{};
        if (alias != file && ::stat(alias.c_str(), &a) == 0 && ::stat(file.c_str(), &b) == 0 && a.st_ino == b.st_ino &&
            a.st_dev == b.st_dev)
          for (auto& o : objects_)
            if (o.path == file) o.path = alias;
        break;
      }
    }
    map = lm[3];
  }
}

std::string CoreFile::localPath(const std::string& mapped) const {
  std::string p = withoutDeleted(mapped);
  if (!program_.empty() && p == executable_) return program_;
  if (sysroot_.empty() || sysroot_ == "/") return p;
  return sysroot_ + p;
}

void CoreFile::checkFiles() {
  std::vector<std::string> seen;
  for (const auto& mp : mappings_) {
    if (std::find(seen.begin(), seen.end(), mp.path) != seen.end()) continue;
    seen.push_back(mp.path);
    CoreFileCheck c;
    c.path = mp.path;
    std::string local = localPath(mp.path);
    struct stat st{};
    if (::stat(local.c_str(), &st) != 0) {
      c.problem = "missing (" + local + "): its code and data that the core does not hold cannot be read";
      fileChecks_.push_back(c);
      problems_.push_back(mp.path + ": " + c.problem);
      continue;
    }
    c.local = local;
    if (mp.offset == 0) {
      // The first page of a mapped ELF file is in a kernel core (coredump_filter bit 4): its
      // build id against the file's says whether the file changed since.
      std::uint64_t base = mp.start;
      std::string inCore = buildId([&](std::uint64_t off, void* out, std::size_t n) {
        for (const auto& s : segments_)
          if (s.vaddr <= base + off && base + off + n <= s.vaddr + s.filesz) {
            std::memcpy(out, data_ + s.offset + (base + off - s.vaddr), n);
            return true;
          }
        return false;
      }, true);
      std::size_t fileSize = 0;
      const unsigned char* bytes = mappedFileBytes(local, fileSize);
      std::string onDisk = bytes ? buildId([&](std::uint64_t off, void* out, std::size_t n) {
        if (off > fileSize || n > fileSize - off) return false;
        std::memcpy(out, bytes + off, n);
        return true;
      }, false) : std::string();
      if (!inCore.empty() && !onDisk.empty() && inCore != onDisk) {
        c.problem = "changed since the core was written (build id " + inCore + " in the core, " + onDisk +
                    " on disk): its frames, lines and variables may be wrong";
        problems_.push_back(mp.path + ": " + c.problem);
      }
    }
    fileChecks_.push_back(c);
  }
}

const unsigned char* CoreFile::mappedFileBytes(const std::string& local, std::size_t& size) {
  for (const auto& f : files_)
    if (f.local == local) {
      size = f.size;
      return f.data;
    }
  OpenFile f;
  f.local = local;
  int fd = ::open(local.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    struct stat st{};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* m = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) {
        f.data = static_cast<const unsigned char*>(m);
        f.size = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  files_.push_back(f);
  size = f.size;
  return f.data;
}

std::size_t CoreFile::readPrefix(std::uint64_t address, void* buffer, std::size_t size) {
  auto* out = static_cast<unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    std::uint64_t a = address + done;
    std::size_t want = size - done;
    // The dumped segment holding `a`.
    auto it = std::upper_bound(segments_.begin(), segments_.end(), a, [](std::uint64_t v, const Segment& s) { return v < s.vaddr; });
    const Segment* seg = it != segments_.begin() && a < std::prev(it)->vaddr + std::prev(it)->memsz ? &*std::prev(it) : nullptr;
    if (seg && a < seg->vaddr + seg->filesz) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(want, seg->vaddr + seg->filesz - a));
      std::memcpy(out + done, data_ + seg->offset + (a - seg->vaddr), n);
      done += n;
      continue;
    }
    // Not dumped: a file's pages, read from the file.
    const Mapping* mp = nullptr;
    for (const auto& m : mappings_)
      if (m.start <= a && a < m.end) mp = &m;
    if (mp == nullptr) break;
    std::size_t fileSize = 0;
    const unsigned char* bytes = mappedFileBytes(localPath(mp->path), fileSize);
    std::uint64_t off = mp->offset + (a - mp->start);
    if (bytes == nullptr || off >= fileSize) break;
    std::uint64_t limit = std::min<std::uint64_t>(mp->end - a, fileSize - off);
    if (seg) limit = std::min<std::uint64_t>(limit, seg->vaddr + seg->memsz - a);
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(want, limit));
    std::memcpy(out + done, bytes + off, n);
    done += n;
  }
  return done;
}

Result<void> CoreFile::read(std::uint64_t address, void* buffer, std::size_t size) {
  std::size_t got = readPrefix(address, buffer, size);
  if (got == size) return {};
  std::uint64_t at = address + got;
  std::string why = "not in the core";
  for (const auto& s : segments_)
    if (s.vaddr <= at && at < s.vaddr + s.memsz) why = "in a segment the core did not dump (coredump_filter, or a truncated core)";
  for (const auto& m : mappings_)
    if (m.start <= at && at < m.end) why = "in " + m.path + ", which is not readable here";
  return Error{errors::kCoreMemoryMissing, "the core holds no bytes at " + hexAddress(at) + ": " + why, true};
}

Result<void> CoreFile::write(std::uint64_t address, const void*, std::size_t) {
  return Error{errors::kCoreCannotRun, "a core file is read-only: cannot write at " + hexAddress(address), true};
}

}  // namespace strata::core
