// dumpCore: the ptrace engine stops every thread of the process and hands over their registers;
// the mappings of /proc/PID/maps are copied through it into an ELF core with the notes a kernel
// core has (NT_PRSTATUS, NT_FPREGSET per thread; NT_PRPSINFO, NT_AUXV, NT_FILE), then it detaches.
#include "strata/core/core_writer.hpp"

#include <elf.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "strata/native/engine/engine.hpp"
#include "strata/proc_maps.hpp"

namespace strata::core {

namespace {

namespace eng = strata::native::engine;

constexpr std::uint64_t kPage = 4096;

class QuietSink : public eng::EventSink {
 public:
  void onStopped(const eng::EngineStop&) override {}
  void onExited(const eng::ExitEvent&) override {}
};

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void addNote(std::vector<unsigned char>& out, std::uint32_t type, const void* desc, std::size_t size) {
  static const char kName[] = "CORE";
  Elf64_Nhdr h{sizeof kName, static_cast<Elf64_Word>(size), type};
  auto put = [&](const void* p, std::size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    out.insert(out.end(), b, b + n);
    while (out.size() % 4) out.push_back(0);
  };
  put(&h, sizeof h);
  put(kName, sizeof kName);
  put(desc, size);
}

// Whether a mapping's bytes go into the core, and how many of them.
std::uint64_t dumpSize(const Mapping& m) {
  if (m.perms.empty() || m.perms[0] != 'r') return 0;
  if (m.path == "[vvar]" || m.path == "[vsyscall]" || m.path.rfind("[vvar", 0) == 0) return 0;
  bool file = m.file();
  bool deleted = m.path.size() > 10 && m.path.compare(m.path.size() - 10, 10, " (deleted)") == 0;
  bool writable = m.perms.size() > 1 && m.perms[1] == 'w';
  if (file && !writable && !deleted) return m.offset == 0 ? kPage : 0;  // the ELF header only
  return m.end - m.start;
}

}  // namespace

Result<DumpReport> dumpCore(pid_t pid, const std::string& path) {
  // The file first: one that exists is never attached for.
  int probe = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (probe < 0) return errnoError(errors::kCoreUnreadable, "create core file " + path);
  ::close(probe);
  ::unlink(path.c_str());
  QuietSink sink;
  eng::Engine engine(sink);
  auto held = std::chrono::steady_clock::now();
  if (auto r = engine.attach(pid).get(); !r) return r.takeError();
  auto written = writeCore(engine, pid, path);
  (void)engine.detach().get();
  if (written) written->heldSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - held).count();
  return written;
}

Result<DumpReport> writeCore(eng::EngineApi& engine, pid_t pid, const std::string& path, const eng::SignalInfo* signal,
                             pid_t signalThread) {
  DumpReport report;
  report.path = path;
  auto held = std::chrono::steady_clock::now();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errnoError(errors::kCoreUnreadable, "create core file " + path);
  struct Closer {
    int fd;
    std::string path;
    bool keep = false;
    ~Closer() {
      ::close(fd);
      if (!keep) ::unlink(path.c_str());
    }
  } closer{fd, path};
  auto finish = [&](Result<DumpReport> r) -> Result<DumpReport> {
    if (r) r->heldSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - held).count();
    return r;
  };
  auto threads = engine.threads().get();
  if (!threads) return finish(threads.takeError());
  std::string proc = "/proc/" + std::to_string(pid);
  auto maps = readMappings(pid);
  if (!maps) return finish(errnoError(errors::kNoSuchProcess, "read " + proc + "/maps"));

  // The process's identity, as the kernel's NT_PRPSINFO and NT_PRSTATUS carry it.
  std::string stat = readText(proc + "/stat");
  int ppid = 0, pgrp = 0, sid = 0;
  char state = 'R';
  if (auto close = stat.rfind(')'); close != std::string::npos)
    std::sscanf(stat.c_str() + close + 2, "%c %d %d %d", &state, &ppid, &pgrp, &sid);
  std::vector<unsigned char> notes;
  elf_prpsinfo ps{};
  ps.pr_state = 0;
  ps.pr_sname = state;
  ps.pr_pid = pid;
  ps.pr_ppid = ppid;
  ps.pr_pgrp = pgrp;
  ps.pr_sid = sid;
  struct stat pst{};
  if (::stat(proc.c_str(), &pst) == 0) {
    ps.pr_uid = pst.st_uid;
    ps.pr_gid = pst.st_gid;
  }
  std::string comm = readText(proc + "/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  std::strncpy(ps.pr_fname, comm.c_str(), sizeof ps.pr_fname);
  std::string args = readText(proc + "/cmdline");
  for (char& c : args)
    if (c == '\0') c = ' ';
  while (!args.empty() && args.back() == ' ') args.pop_back();
  std::strncpy(ps.pr_psargs, args.c_str(), sizeof ps.pr_psargs - 1);

  // The thread that took the signal first, else the one the process is named after, as the
  // kernel orders them.
  pid_t first = signal && signalThread ? signalThread : pid;
  std::vector<eng::ThreadEntry> ordered;
  for (const auto& t : *threads)
    if (t.tid == first) ordered.push_back(t);
  for (const auto& t : *threads)
    if (t.tid != first) ordered.push_back(t);
  for (const auto& t : ordered) {
    auto regs = engine.registers(t.tid).get();
    if (!regs) return finish(regs.takeError());
    elf_prstatus st{};
    st.pr_pid = t.tid;
    st.pr_ppid = ppid;
    st.pr_pgrp = pgrp;
    st.pr_sid = sid;
    std::memcpy(&st.pr_reg, &regs->gpr, sizeof regs->gpr);
    st.pr_fpvalid = regs->hasFpr ? 1 : 0;
    if (signal) st.pr_cursig = static_cast<short>(signal->signo);
    addNote(notes, NT_PRSTATUS, &st, sizeof st);
    if (&t == &ordered.front()) {
      addNote(notes, NT_PRPSINFO, &ps, sizeof ps);
      if (signal) {
        siginfo_t si{};
        si.si_signo = signal->signo;
        si.si_code = signal->code;
        si.si_addr = reinterpret_cast<void*>(signal->faultAddress);
        addNote(notes, 0x53494749 /* NT_SIGINFO */, &si, sizeof si);
      }
    }
    if (regs->hasFpr) addNote(notes, NT_FPREGSET, &regs->fpr, sizeof regs->fpr);
  }
  std::string auxv = readText(proc + "/auxv");
  if (!auxv.empty()) addNote(notes, NT_AUXV, auxv.data(), auxv.size());
  {
    std::vector<unsigned char> file;
    std::vector<const Mapping*> named;
    for (const auto& m : *maps)
      if (m.file()) named.push_back(&m);
    std::uint64_t head[2] = {named.size(), kPage};
    file.insert(file.end(), reinterpret_cast<unsigned char*>(head), reinterpret_cast<unsigned char*>(head) + 16);
    for (const Mapping* m : named) {
      std::uint64_t e[3] = {m->start, m->end, m->offset / kPage};
      file.insert(file.end(), reinterpret_cast<unsigned char*>(e), reinterpret_cast<unsigned char*>(e) + 24);
    }
    for (const Mapping* m : named) file.insert(file.end(), m->path.begin(), m->path.end()), file.push_back(0);
    addNote(notes, 0x46494c45 /* NT_FILE */, file.data(), file.size());
  }

  // Layout: header, program headers, notes, then each segment page-aligned.
  std::vector<Elf64_Phdr> phdrs;
  std::uint64_t at = sizeof(Elf64_Ehdr) + (maps->size() + 1) * sizeof(Elf64_Phdr);
  Elf64_Phdr note{};
  note.p_type = PT_NOTE;
  note.p_offset = at;
  note.p_filesz = notes.size();
  phdrs.push_back(note);
  at = (at + notes.size() + kPage - 1) & ~(kPage - 1);
  for (const auto& m : *maps) {
    Elf64_Phdr ph{};
    ph.p_type = PT_LOAD;
    ph.p_vaddr = m.start;
    ph.p_memsz = m.end - m.start;
    ph.p_filesz = dumpSize(m);
    ph.p_offset = ph.p_filesz ? at : 0;
    ph.p_align = kPage;
    ph.p_flags = (m.perms[0] == 'r' ? PF_R : 0) | (m.perms.size() > 1 && m.perms[1] == 'w' ? PF_W : 0) |
                 (m.executable() ? PF_X : 0);
    at += ph.p_filesz;
    phdrs.push_back(ph);
  }
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
  eh.e_type = ET_CORE;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = static_cast<Elf64_Half>(phdrs.size());

  auto writeAt = [&](std::uint64_t offset, const void* data, std::size_t n) -> Result<void> {
    auto* p = static_cast<const unsigned char*>(data);
    while (n) {
      ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        return errnoError(errors::kCoreUnreadable, "write core file " + path);
      }
      p += w, offset += static_cast<std::uint64_t>(w), n -= static_cast<std::size_t>(w);
    }
    return {};
  };
  if (auto r = writeAt(0, &eh, sizeof eh); !r) return finish(r.takeError());
  if (auto r = writeAt(sizeof eh, phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr)); !r) return finish(r.takeError());
  if (auto r = writeAt(note.p_offset, notes.data(), notes.size()); !r) return finish(r.takeError());
  std::vector<unsigned char> chunk(1 << 20);
  native::MemoryAccess& memory = engine.memory();
  for (std::size_t i = 1; i < phdrs.size(); ++i) {
    const Elf64_Phdr& ph = phdrs[i];
    if (!ph.p_filesz) continue;
    ++report.segments;
    for (std::uint64_t done = 0; done < ph.p_filesz;) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), ph.p_filesz - done));
      if (!memory.read(ph.p_vaddr + done, chunk.data(), n)) {
        // Page by page: what cannot be read (a guard page, a mapping past its file) is zeros.
        for (std::size_t off = 0; off < n; off += kPage) {
          std::size_t len = std::min<std::size_t>(kPage, n - off);
          if (!memory.read(ph.p_vaddr + done + off, chunk.data() + off, len)) {
            std::memset(chunk.data() + off, 0, len);
            report.unreadable += len;
          }
        }
      }
      if (auto r = writeAt(ph.p_offset + done, chunk.data(), n); !r) return finish(r.takeError());
      done += n;
    }
  }
  if (::ftruncate(fd, static_cast<off_t>(at)) != 0) return finish(errnoError(errors::kCoreUnreadable, "size core file " + path));
  report.bytes = at;
  report.threads = ordered.size();
  closer.keep = true;
  return finish(report);
}

}  // namespace strata::core
