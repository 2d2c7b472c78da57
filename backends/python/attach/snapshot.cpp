// The read-only picture of a CPython process: NativeDebugger stops and unwinds every thread,
// PyRemote reads the Python state, both are merged, the process is released.
#include "backends/python/attach/snapshot.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>

#include "strata/native/debugger/debugger.hpp"

namespace strata::python::attach {

namespace {

namespace nd = strata::native::debugger;
constexpr std::size_t kMaxNativeFrames = 4096;

long currentSyscall(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
  std::string first;
  if (!(in >> first) || first == "running") return -1;
  return std::strtol(first.c_str(), nullptr, 10);
}

bool interpreterModule(const std::string& module) {
  return module.rfind("libpython", 0) == 0 || module.rfind("python", 0) == 0;
}

std::string waitText(const std::vector<nd::FrameEntry>& native, long syscall) {
  for (std::size_t i = 0; i < native.size() && i < 24; ++i) {
    const std::string& n = native[i].name;
    if (n.find("take_gil") != std::string::npos) return "waiting for the GIL";
    if (n.find("PyThread_acquire_lock") != std::string::npos || n.find("PyMutex_Lock") != std::string::npos ||
        n.find("pthread_mutex_lock") != std::string::npos || n.find("_PySemaphore_Wait") != std::string::npos)
      return "waiting on a lock";
  }
  if (syscall >= 0) {
    // The x86-64 system calls a waiting thread is usually found in.
    static const std::map<long, const char*> names{
        {0, "read"}, {7, "poll"}, {23, "select"}, {35, "nanosleep"}, {43, "accept"}, {45, "recvfrom"},
        {61, "wait4"}, {202, "futex"}, {230, "clock_nanosleep"}, {232, "epoll_wait"}, {270, "pselect6"},
        {271, "ppoll"}, {281, "epoll_pwait"}};
    auto it = names.find(syscall);
    return "in system call " + (it != names.end() ? std::string(it->second) : std::to_string(syscall));
  }
  return "running";
}

SnapshotFrame fromNative(const nd::FrameEntry& f) {
  SnapshotFrame out;
  out.function = f.name.empty() ? f.module : f.name;
  out.file = f.file;
  out.line = f.line;
  out.module = f.module;
  out.pc = f.pc;
  return out;
}

SnapshotFrame fromPython(const remote::PythonFrame& f) {
  SnapshotFrame out;
  out.python = true;
  out.function = f.function;
  out.file = f.file;
  out.line = f.line;
  out.locals = f.locals;
  return out;
}

}  // namespace

char processState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  return close != std::string::npos && close + 2 < all.size() ? all[close + 2] : '?';
}

bool runsPython(pid_t pid) { return remote::PyRemote::open(pid).ok(); }

// A rank variable in the environment the stopped process has now: libc's `environ` array, read
// from its memory (bounded: 4096 entries of at most 4 KiB). Empty: none, or unreadable.
std::string environRank(pid_t pid, std::uint64_t environVar) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  auto read8 = [&](std::uint64_t at, std::uint64_t& v) { return ::pread(fd, &v, 8, static_cast<off_t>(at)) == 8; };
  std::string found;
  std::uint64_t array = 0;
  if (environVar && read8(environVar, array) && array) {
    for (int i = 0; i < 4096 && found.empty(); ++i) {
      std::uint64_t entry = 0;
      if (!read8(array + 8 * static_cast<std::uint64_t>(i), entry) || !entry) break;
      char buf[4096];
      ssize_t n = ::pread(fd, buf, sizeof buf - 1, static_cast<off_t>(entry));
      if (n <= 0) continue;
      buf[n] = '\0';
      std::string text(buf);
      for (const char* name : kRankVariables) {
        std::string prefix = std::string(name) + "=";
        if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size()) {
          found = text.substr(prefix.size());
          break;
        }
      }
    }
  }
  ::close(fd);
  return found;
}

Result<ProcessSnapshot> takeSnapshot(remote::PyRemote& remote) {
  ProcessSnapshot snap;
  snap.pid = remote.pid();
  snap.version = remote.version();
  snap.minor = remote.layout().minor;
  snap.stoppedBySignal = processState(snap.pid) == 'T';

  nd::NativeDebugger debugger(nd::Callbacks{});
  if (auto r = debugger.attach(snap.pid).get(); !r) return r.takeError();
  auto threads = debugger.threads().get();
  if (!threads) {
    (void)debugger.detach().get();
    return threads.takeError();
  }
  std::vector<std::pair<nd::FramePage, long>> native;
  for (const auto& t : *threads) {
    auto page = debugger.stackTrace(t.tid, 0, kMaxNativeFrames).get();
    native.emplace_back(page ? std::move(*page) : nd::FramePage{}, currentSyscall(snap.pid, t.tid));
  }
  // The rank of a distributed job's process, as its environment is now (a spawned rank sets it).
  if (auto environVar = debugger.symbolAddress("environ", "").get(); environVar && *environVar) {
    std::string rank = environRank(snap.pid, *environVar);
    if (!rank.empty() && rank.size() < 10 && rank.find_first_not_of("0123456789") == std::string::npos)
      snap.rank = std::stoll(rank);
  }
  remote::ReadOptions ro;
  ro.locals = true;
  auto py = remote.snapshot(ro);
  if (auto r = debugger.detach().get(); !r) return r.takeError();
  if (!py) return py.takeError();

  snap.gilLocked = py->gilLocked;
  std::map<pid_t, const remote::PythonThread*> byTid;
  for (const auto& t : py->threads) {
    snap.threadStates.push_back(t.threadState);
    if (t.tid) byTid[t.tid] = &t;
  }
  for (std::size_t i = 0; i < threads->size(); ++i) {
    const auto& entry = (*threads)[i];
    const auto& frames = native[i].first.frames;
    SnapshotThread t;
    t.tid = entry.tid;
    t.name = entry.name;
    const remote::PythonThread* pt = byTid.count(entry.tid) ? byTid[entry.tid] : nullptr;
    t.python = pt != nullptr;
    t.holdsGil = pt && pt->holdsGil;
    if (t.holdsGil) snap.gilHolder = t.tid;
    t.state = waitText(frames, native[i].second);
    if (t.holdsGil) t.state = "holds the GIL; " + t.state;
    for (const auto& f : frames)
      if (!interpreterModule(f.module)) {
        t.topNative = f.name.empty() ? f.module : f.name;
        break;
      }
    std::vector<std::string> names;
    std::vector<std::uint64_t> cfas;
    for (const auto& f : frames) {
      names.push_back(f.name);
      cfas.push_back(f.cfa);
    }
    auto merged = pt ? remote::mergeStacks(names, *pt, cfas) : std::nullopt;
    if (merged) {
      for (const auto& m : *merged) {
        if (m.python) {
          if (!pt->frames[m.index].isShim) t.frames.push_back(fromPython(pt->frames[m.index]));
        } else if (!interpreterModule(frames[m.index].module)) {
          t.frames.push_back(fromNative(frames[m.index]));
        }
      }
    } else {
      // Stacks that do not fit together: the Python frames first, then the native ones.
      if (pt)
        for (const auto& f : pt->frames)
          if (!f.isShim) t.frames.push_back(fromPython(f));
      for (const auto& f : frames)
        if (!interpreterModule(f.module)) t.frames.push_back(fromNative(f));
    }
    snap.threads.push_back(std::move(t));
  }
  return snap;
}

}  // namespace strata::python::attach
