// One process's stacks, read from the outside: attaches with NativeDebugger, reads every thread's
// native stack and (in a CPython process) its Python frames from memory, detaches, merges them.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/python/attach/snapshot.hpp"
#include "strata/hex.hpp"
#include "strata/native/debugger/debugger.hpp"
#include "strata/python/remote/py_remote.hpp"
#include "strata/stacks/stacks.hpp"
#include "thread_report.hpp"

namespace strata::stacks {

namespace {

namespace json = boost::json;
using namespace strata::native::debugger;
namespace py = strata::python::remote;

constexpr std::size_t kMaxNativeFrames = 8192;  // a runaway recursion still unwinds in bounded time

// The system call a stopped thread sits in, from /proc (-1 when it runs user code).
long currentSyscall(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
  std::string first;
  if (!(in >> first) || first == "running") return -1;
  return std::strtol(first.c_str(), nullptr, 10);
}

char processState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  return close != std::string::npos && close + 2 < all.size() ? all[close + 2] : '?';
}

// Every descendant of `root`, parents before their children.
std::vector<pid_t> descendantsOf(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> kids;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      pid_t p = static_cast<pid_t>(std::atoi(e->d_name));
      if (p <= 0) continue;
      std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
      std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto close = all.rfind(')');
      if (close == std::string::npos) continue;
      int ppid = 0;
      if (std::sscanf(all.c_str() + close + 2, "%*c %d", &ppid) == 1) kids[ppid].push_back(p);
    }
    closedir(d);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto& k = kids[p];
    std::sort(k.rbegin(), k.rend());
    for (pid_t c : k) {
      out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

}  // namespace

Result<void> inspectProcess(pid_t pid, const Options& o, json::object& out, std::string& text) {
  std::unique_ptr<py::PyRemote> remote;
  if (!o.nativeOnly) {
    auto r = py::PyRemote::open(pid, o.layoutMinor);
    if (r) remote = std::move(*r);
    else if (r.error().id != errors::kNoPythonRuntime || o.pythonOnly || o.layoutMinor) return r.takeError();
  }
  // A process stopped by a signal (SIGSTOP, ^Z) is read the same way; detaching leaves it in
  // its group stop.
  bool wasStopped = processState(pid) == 'T';

  NativeDebugger debugger(Callbacks{});
  if (auto r = debugger.attach(pid).get(); !r) return r.takeError();
  auto threads = debugger.threads().get();
  if (!threads) {
    (void)debugger.detach().get();
    return Error{threads.error().id, "list threads: " + threads.error().message};
  }
  std::vector<ThreadStack> data;
  for (const auto& t : *threads) {
    ThreadStack d{t};
    d.syscall = currentSyscall(pid, t.tid);
    if (!o.pythonOnly) d.page = debugger.stackTrace(t.tid, 0, kMaxNativeFrames).get();
    data.push_back(std::move(d));
  }
  if (o.readRank) {
    // The executable's copy first (a copy relocation moves environ there when it refers to it).
    auto environVar = debugger.symbolAddress("environ", "").get();
    if (environVar && *environVar)
      if (std::string rank = python::attach::environRank(pid, *environVar); !rank.empty()) out["environRank"] = rank;
  }
  std::optional<Result<py::PythonSnapshot>> snapshot;
  if (remote) {
    py::ReadOptions ro;
    ro.locals = o.locals;
    snapshot = remote->snapshot(ro);
  }
  // Detach before printing: the process is held only as long as the reading takes.
  if (auto r = debugger.detach().get(); !r) return Error{r.error().id, "detach: " + r.error().message};
  if (snapshot && !*snapshot) return snapshot->takeError();

  out["pid"] = pid;
  text += "process " + std::to_string(pid) + ": ";
  if (snapshot) {
    const auto& s = **snapshot;
    out["python"] = json::object{{"version", s.version}, {"layout", s.layoutSource}, {"gilLocked", s.gilLocked}};
    text += "CPython " + s.version + ", ";
  }
  text += std::to_string(data.size()) + " threads" + (wasStopped ? " (stopped by a signal; left stopped)" : "") + "\n";
  if (wasStopped) out["stopped"] = true;

  reportThreads(o, data, snapshot ? &**snapshot : nullptr, out, text);
  return {};
}

std::vector<pid_t> descendants(pid_t root) { return descendantsOf(root); }

std::vector<pid_t> withDescendants(std::vector<pid_t> pids) {
  std::vector<pid_t> named = pids;
  for (pid_t n : named)
    for (pid_t c : descendantsOf(n))
      if (std::find(pids.begin(), pids.end(), c) == pids.end()) pids.push_back(c);
  return pids;
}

}  // namespace strata::stacks
