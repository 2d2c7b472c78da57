// `strata stacks PID`: attaches with NativeDebugger, reads every thread's native stack and (in a
// CPython process) its Python frames from memory, detaches, prints them merged.
#include "adapter/cli/stacks.hpp"

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

#include <boost/json.hpp>

#include "backends/python/attach/snapshot.hpp"
#include "strata/hex.hpp"
#include "strata/native/debugger/debugger.hpp"
#include "strata/python/remote/py_remote.hpp"

namespace strata::cli {

namespace {

namespace json = boost::json;
using namespace strata::native::debugger;
namespace py = strata::python::remote;

constexpr std::size_t kMaxNativeFrames = 8192;  // a runaway recursion still unwinds in bounded time

struct Options {
  bool json = false;
  bool nativeOnly = false;
  bool pythonOnly = false;
  bool full = false;  // interpreter frames shown one by one
  bool locals = false;
  bool children = false;
  bool tree = false;  // every thread of every process merged into one tree (STAT style)
  std::size_t maxFrames = 200;  // printed per thread
  std::optional<int> layoutMinor;
};

const char* usage() {
  return "usage: strata stacks [--json] [--native|--python-only] [--full] [--locals] [--children]\n"
         "                     [--max-frames N] [--python-layout 3.N] PID\n"
         "       strata stacks --tree [--json] [--python-only] [--children] PID...";
}

int usageError(const std::string& message) {
  std::fprintf(stderr, "strata: stacks: %s\n%s\n", message.c_str(), usage());
  return 2;
}

// The x86-64 system calls a waiting thread is usually found in.
std::string syscallName(long nr) {
  static const std::map<long, const char*> names{
      {0, "read"}, {1, "write"}, {7, "poll"}, {23, "select"}, {34, "pause"}, {35, "nanosleep"}, {43, "accept"},
      {45, "recvfrom"}, {47, "recvmsg"}, {61, "wait4"}, {202, "futex"}, {219, "restart_syscall"}, {230, "clock_nanosleep"}, {232, "epoll_wait"},
      {247, "waitid"}, {270, "pselect6"}, {271, "ppoll"}, {281, "epoll_pwait"}, {288, "accept4"}, {441, "epoll_pwait2"}};
  auto it = names.find(nr);
  return it != names.end() ? it->second : "syscall " + std::to_string(nr);
}

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
std::vector<pid_t> descendants(pid_t root) {
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

// libpython3.X.so or the python3.X executable; C extensions (_ctypes.cpython-312-...) stay shown.
bool isInterpreterModule(const std::string& module) {
  return module.rfind("libpython", 0) == 0 || module.rfind("python", 0) == 0;
}

// What a thread waits on, from its innermost native frames and its system call.
struct Wait {
  std::string kind;  // gil, lock, syscall, running
  std::string text;
  std::string syscall;
};

Wait waitOf(const std::vector<FrameEntry>& native, long syscall) {
  for (std::size_t i = 0; i < native.size() && i < 24; ++i) {
    const std::string& n = native[i].name;
    if (n.find("take_gil") != std::string::npos) return {"gil", "waiting for the GIL", ""};
    if (n.find("PyThread_acquire_lock") != std::string::npos || n.find("acquire_timed") != std::string::npos ||
        n.find("PyMutex_Lock") != std::string::npos || n.find("pthread_mutex_lock") != std::string::npos ||
        n.find("_PySemaphore_Wait") != std::string::npos)  // 3.13+: the parking lot under every PyMutex
      return {"lock", "waiting on a lock", ""};
  }
  if (syscall >= 0) {
    std::string name = syscallName(syscall);
    return {"syscall", "in syscall " + name, name};
  }
  return {"running", "running", ""};
}

std::string nativeText(const FrameEntry& f) {
  std::string text;
  if (!f.file.empty()) text = f.name + " (" + f.file + ":" + std::to_string(f.line) + ")";
  else {
    text = f.module + "+" + hexAddress(f.moduleOffset);
    if (!f.name.empty()) text += "  " + f.name;
  }
  if (f.inlined) text += " [inlined]";
  return text;
}

json::object nativeJson(const FrameEntry& f) {
  json::object frame{{"kind", "native"}, {"function", f.name}, {"module", f.module},
                     {"offset", hexAddress(f.moduleOffset)}, {"pc", hexAddress(f.pc)}};
  if (!f.file.empty()) {
    frame["file"] = f.file;
    frame["line"] = f.line;
  }
  if (f.inlined) frame["inlined"] = true;
  return frame;
}

// One thread's frames as printed: Python, native, or a run of interpreter frames folded.
class FrameList {
 public:
  FrameList(const Options& options, std::string& text, json::array& frames) : o_(options), text_(text), frames_(frames) {}

  void python(const py::PythonFrame& f) {
    if (f.isShim) return;
    flush();
    if (!room()) return;
    json::object frame{{"index", index_}, {"kind", "python"}, {"function", f.function}, {"file", f.file}, {"line", f.line}};
    text_ += "  #" + std::to_string(index_++) + " [py] " + f.function + " (" + f.file + ":" + std::to_string(f.line) + ")\n";
    if (f.locals) {
      json::array locals;
      for (const auto& l : *f.locals) {
        locals.push_back(json::object{{"name", l.name}, {"type", l.type}, {"value", l.value}});
        text_ += "        " + l.name + " = " + (l.value.empty() ? "<" + l.type + ">" : l.value + "  (" + l.type + ")") + "\n";
      }
      frame["locals"] = std::move(locals);
    }
    frames_.push_back(std::move(frame));
  }

  void native(const FrameEntry& f, bool foldable) {
    if (foldable && !o_.full) {
      if (folded_ && foldedModule_ != f.module) flush();
      ++folded_;
      foldedModule_ = f.module;
      return;
    }
    flush();
    if (!room()) return;
    json::object frame = nativeJson(f);
    frame["index"] = index_;
    text_ += "  #" + std::to_string(index_++) + " " + nativeText(f) + "\n";
    frames_.push_back(std::move(frame));
  }

  void note(const std::string& line) {
    flush();
    text_ += "  (" + line + ")\n";
  }

  void flush() {
    if (!folded_) return;
    if (room()) {
      text_ += "     ... " + std::to_string(folded_) + " interpreter frame" + (folded_ == 1 ? "" : "s") + " in " + foldedModule_ + "\n";
      frames_.push_back(json::object{{"kind", "interpreter"}, {"count", folded_}, {"module", foldedModule_}});
    }
    folded_ = 0;
  }

  // Finishes the list: says how many frames the cap left out.
  std::size_t finish() {
    flush();
    if (cut_) text_ += "  ... " + std::to_string(cut_) + " more frames not shown (--max-frames " + std::to_string(o_.maxFrames) + ")\n";
    return cut_;
  }

 private:
  bool room() {
    if (frames_.size() < o_.maxFrames) return true;
    ++cut_;
    return false;
  }

  const Options& o_;
  std::string& text_;
  json::array& frames_;
  std::size_t index_ = 0;
  std::size_t folded_ = 0;
  std::string foldedModule_;
  std::size_t cut_ = 0;
};

// Attaches to one process, reads it, detaches. Fills `out` (JSON) and `text`.
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
  struct ThreadData {
    native::engine::ThreadEntry entry;
    Result<FramePage> page = FramePage{};
    long syscall = -1;
  };
  std::vector<ThreadData> data;
  for (const auto& t : *threads) {
    ThreadData d{t};
    d.syscall = currentSyscall(pid, t.tid);
    if (!o.pythonOnly) d.page = debugger.stackTrace(t.tid, 0, kMaxNativeFrames).get();
    data.push_back(std::move(d));
  }
  if (o.tree) {
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

  std::map<pid_t, const py::PythonThread*> pyThreads;
  if (snapshot)
    for (const auto& t : (*snapshot)->threads)
      if (t.tid) pyThreads[t.tid] = &t;

  out["pid"] = pid;
  text += "process " + std::to_string(pid) + ": ";
  if (snapshot) {
    const auto& s = **snapshot;
    out["python"] = json::object{{"version", s.version}, {"layout", s.layoutSource}, {"gilLocked", s.gilLocked}};
    text += "CPython " + s.version + ", ";
  }
  text += std::to_string(data.size()) + " threads" + (wasStopped ? " (stopped by a signal; left stopped)" : "") + "\n";
  if (wasStopped) out["stopped"] = true;

  json::array threadList;
  for (const ThreadData& d : data) {
    const py::PythonThread* pt = pyThreads.count(d.entry.tid) ? pyThreads[d.entry.tid] : nullptr;
    json::object thread{{"id", d.entry.tid}, {"name", d.entry.name}};
    static const std::vector<FrameEntry> none;
    const std::vector<FrameEntry>& native = d.page ? d.page->frames : none;
    Wait wait = waitOf(native, d.syscall);
    std::string state = wait.text;
    if (pt && pt->holdsGil) state = "holds the GIL; " + state;
    thread["python"] = pt != nullptr;
    if (pt) thread["holdsGil"] = pt->holdsGil;
    thread["waitingOn"] = wait.kind;
    if (!wait.syscall.empty()) thread["syscall"] = wait.syscall;
    thread["state"] = state;
    text += "\nthread " + std::to_string(d.entry.tid) + " \"" + d.entry.name + "\": " + state + "\n";
    if (!d.page) {
      thread["error"] = d.page.error().message;
      text += "  (no native stack: " + d.page.error().message + ")\n";
    }
    json::array frames;
    FrameList list(o, text, frames);
    if (pt && o.pythonOnly) {
      for (const auto& f : pt->frames) list.python(f);
    } else if (pt) {
      std::vector<std::string> names;
      std::vector<std::uint64_t> cfas;
      for (const auto& f : native) {
        names.push_back(f.name);
        cfas.push_back(f.cfa);
      }
      auto merged = d.page && d.page->totalFrames <= native.size() ? py::mergeStacks(names, *pt, cfas) : std::nullopt;
      thread["merged"] = merged.has_value();
      if (merged) {
        for (const auto& m : *merged) {
          if (m.python) list.python(pt->frames[m.index]);
          else list.native(native[m.index], isInterpreterModule(native[m.index].module));
        }
      } else {
        std::size_t evals = 0;
        for (const auto& n : names) evals += py::isEvalFrameFunction(n);
        std::string why = "Python and native frames do not match (" + std::to_string(evals) +
                          " _PyEval_EvalFrameDefault frames, " + std::to_string(pt->evalCalls) +
                          " Python eval calls): both shown, Python first";
        thread["note"] = why;
        list.note(why);
        for (const auto& f : pt->frames) list.python(f);
        list.note("native frames");
        for (const auto& f : native) list.native(f, false);
      }
    } else if (!o.pythonOnly) {
      for (const auto& f : native) list.native(f, false);
    }
    std::size_t cut = list.finish();
    if (pt && pt->totalFrames > pt->frames.size()) thread["pythonFramesUnread"] = pt->totalFrames - pt->frames.size();
    thread["cutFrames"] = cut;
    if (d.page) thread["totalFrames"] = d.page->totalFrames;
    thread["frames"] = std::move(frames);
    threadList.push_back(std::move(thread));
  }
  if (snapshot)
    for (const auto& t : (*snapshot)->threads)
      if (!t.tid) text += "\n(a Python thread state " + hexAddress(t.threadState) + " names no live thread)\n";
  out["threads"] = std::move(threadList);
  return {};
}

// The rank a process has in a distributed job, from its environment as the process sees it
// now (`report["environRank"]`, read from libc's environ while it was stopped: a rank started by
// torch.multiprocessing.spawn sets RANK itself), else as its launcher started it (torchrun,
// mpirun, srun: /proc/PID/environ); empty: none.
std::string rankOf(pid_t pid, const json::object& report) {
  if (report.contains("environRank")) return std::string(report.at("environRank").as_string());
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, std::string> env;
  std::size_t at = 0;
  while (at < all.size()) {
    std::size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    std::string entry = all.substr(at, end - at);
    if (auto eq = entry.find('='); eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    at = end + 1;
  }
  for (const char* name : python::attach::kRankVariables)
    if (auto it = env.find(name); it != env.end() && !it->second.empty()) return it->second;
  return "";
}

// One node of the merged tree: a frame, the threads whose stacks pass through it.
struct TreeNode {
  std::string label;
  json::object frame;
  std::vector<std::string> threads;  // "rank R / NAME (tid)" or "pid P / NAME (tid)"
  std::vector<std::string> owners;   // "rank R" or "pid P", one entry per thread
  std::vector<std::unique_ptr<TreeNode>> children;
};

std::string frameLabel(const json::object& f) {
  auto str = [&](const char* k) { return f.contains(k) && f.at(k).is_string() ? std::string(f.at(k).as_string()) : std::string(); };
  std::string where = str("file");
  if (!where.empty() && f.contains("line")) where += ":" + std::to_string(f.at("line").to_number<long>());
  std::string name = str("function");
  if (str("kind") == "python") return name + " (" + where + ")";
  if (name.empty()) name = str("module") + "+" + str("offset");
  return where.empty() ? name : name + " (" + where + ")";
}

// "ranks 0-2, 5, pid 812": the owners of a node, each once, ranks as ranges.
std::string ownersText(const std::vector<std::string>& owners) {
  std::vector<long> ranks;
  std::vector<std::string> others;
  for (const auto& o : owners) {
    if (o.rfind("rank ", 0) == 0) ranks.push_back(std::strtol(o.c_str() + 5, nullptr, 10));
    else if (std::find(others.begin(), others.end(), o) == others.end()) others.push_back(o);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += (text.empty() ? (ranks.size() == 1 ? "rank " : "ranks ") : ", ") + std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  for (const auto& o : others) text += (text.empty() ? "" : ", ") + o;
  return text;
}

void addPath(TreeNode& root, const std::vector<const json::object*>& path, const std::string& thread, const std::string& owner) {
  TreeNode* node = &root;
  node->threads.push_back(thread);
  node->owners.push_back(owner);
  for (const json::object* f : path) {
    std::string label = frameLabel(*f);
    TreeNode* next = nullptr;
    for (auto& c : node->children)
      if (c->label == label) next = c.get();
    if (!next) {
      node->children.push_back(std::make_unique<TreeNode>());
      next = node->children.back().get();
      next->label = label;
      next->frame = *f;
      next->frame.erase("index");
      next->frame.erase("locals");
    }
    next->threads.push_back(thread);
    next->owners.push_back(owner);
    node = next;
  }
}

json::object treeJson(const TreeNode& n) {
  json::object out = n.frame;
  out["label"] = n.label;
  out["count"] = n.threads.size();
  out["owners"] = ownersText(n.owners);
  json::array threads;
  for (const auto& t : n.threads) threads.push_back(json::string(t));
  out["threads"] = std::move(threads);
  json::array kids;
  for (const auto& c : n.children) kids.push_back(treeJson(*c));
  out["children"] = std::move(kids);
  return out;
}

// Children with more threads first; a chain of single children keeps its order.
void printTree(const TreeNode& n, int depth, std::string& text) {
  std::vector<const TreeNode*> kids;
  for (const auto& c : n.children) kids.push_back(c.get());
  std::stable_sort(kids.begin(), kids.end(), [](const TreeNode* a, const TreeNode* b) { return a->threads.size() > b->threads.size(); });
  for (const TreeNode* c : kids) {
    text += std::string(2 * depth, ' ') + "[" + std::to_string(c->threads.size()) + "] " + c->label;
    if (c->children.size() != 1 || kids.size() > 1 || depth == 0) text += "   <- " + ownersText(c->owners);
    text += "\n";
    printTree(*c, depth + 1, text);
  }
}

// Merges the reports of `inspectProcess` into one tree, outermost frames at the top.
ParallelStacks mergeReports(const std::vector<std::pair<pid_t, json::object>>& reports, bool pythonOnly) {
  TreeNode root;
  json::array processes;
  std::size_t threadCount = 0;
  for (const auto& [pid, report] : reports) {
    std::string rank = rankOf(pid, report);
    std::string owner = rank.empty() ? "pid " + std::to_string(pid) : "rank " + rank;
    json::object proc{{"pid", pid}};
    if (!rank.empty()) proc["rank"] = std::strtol(rank.c_str(), nullptr, 10);
    if (report.contains("error")) {
      proc["error"] = report.at("error");
      processes.push_back(std::move(proc));
      continue;
    }
    if (report.contains("python")) proc["python"] = report.at("python");
    processes.push_back(std::move(proc));
    for (const auto& tv : report.at("threads").as_array()) {
      const json::object& t = tv.as_object();
      std::vector<const json::object*> path;
      for (const auto& fv : t.at("frames").as_array()) {
        const json::object& f = fv.as_object();
        if (f.contains("kind") && f.at("kind") == "interpreter") continue;
        path.push_back(&f);
      }
      if (path.empty()) continue;  // a thread with no frame of the kind asked for
      std::reverse(path.begin(), path.end());
      std::string thread = owner + " / " + std::string(t.at("name").as_string()) + " (" +
                           std::to_string(t.at("id").to_number<long>()) + ")";
      addPath(root, path, thread, owner);
      ++threadCount;
    }
  }
  ParallelStacks out;
  out.text = std::to_string(threadCount) + " threads" + (pythonOnly ? " with Python frames" : "") + " in " +
             std::to_string(reports.size()) + " processes (" + ownersText(root.owners) + ")\n";
  for (const auto& [pid, report] : reports)
    if (report.contains("error")) out.text += "  process " + std::to_string(pid) + ": " + std::string(report.at("error").as_string()) + "\n";
  printTree(root, 0, out.text);
  out.json = json::object{{"processes", std::move(processes)}, {"threads", threadCount}, {"tree", treeJson(root)}};
  return out;
}

}  // namespace

int stacksCommand(int argc, char** argv, int first) {
  Options o;
  std::string pidText;
  std::vector<std::string> morePids;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") o.json = true;
    else if (a == "--native") o.nativeOnly = true;
    else if (a == "--python-only") o.pythonOnly = true;
    else if (a == "--full") o.full = true;
    else if (a == "--locals") o.locals = true;
    else if (a == "--children") o.children = true;
    else if (a == "--tree") o.tree = true;
    else if (a == "--max-frames" || a == "--python-layout") {
      if (i + 1 >= argc) return usageError(a + " needs a value");
      std::string v = argv[++i];
      char* end = nullptr;
      if (a == "--max-frames") {
        long n = std::strtol(v.c_str(), &end, 10);
        if (n <= 0 || *end != '\0') return usageError("--max-frames needs a positive number, not '" + v + "'");
        o.maxFrames = static_cast<std::size_t>(n);
      } else {
        long minor = v.rfind("3.", 0) == 0 ? std::strtol(v.c_str() + 2, &end, 10) : -1;
        if (minor < 0 || !end || *end != '\0') return usageError("--python-layout needs a version like 3.12, not '" + v + "'");
        o.layoutMinor = static_cast<int>(minor);
      }
    } else if (!a.empty() && a[0] != '-' && (pidText.empty() || o.tree)) {
      if (!pidText.empty()) morePids.push_back(a);
      else pidText = a;
    } else {
      return usageError("unexpected argument '" + a + "'");
    }
  }
  // --tree takes several PIDs (the ranks of a job, or a launcher with --children).
  for (const auto& more : morePids)
    if (!o.tree) return usageError("unexpected argument '" + more + "'");
  if (o.nativeOnly && o.pythonOnly) return usageError("--native and --python-only exclude each other");
  char* end = nullptr;
  long pid = pidText.empty() ? 0 : std::strtol(pidText.c_str(), &end, 10);
  if (pid <= 0 || *end != '\0') {
    std::fprintf(stderr, "strata: stacks needs a process id: strata stacks [--json] PID\n");
    return 2;
  }

  std::vector<pid_t> pids{static_cast<pid_t>(pid)};
  for (const auto& more : morePids) {
    long p = std::strtol(more.c_str(), &end, 10);
    if (p <= 0 || *end != '\0') return usageError("'" + more + "' is not a process id");
    pids.push_back(static_cast<pid_t>(p));
  }
  if (o.children) {
    std::vector<pid_t> named = pids;
    for (pid_t n : named)
      for (pid_t c : descendants(n))
        if (std::find(pids.begin(), pids.end(), c) == pids.end()) pids.push_back(c);
  }
  if (o.tree) {
    auto tree = parallelStacks(std::move(pids), false, o.pythonOnly);
    if (!tree) {
      std::fprintf(stderr, "strata: %s\n", tree.error().message.c_str());
      return 1;
    }
    if (o.json) std::printf("%s\n", json::serialize(tree->json).c_str());
    else std::fputs(tree->text.c_str(), stdout);
    return 0;
  }
  json::array reports;
  std::string text;
  int status = 0;
  for (std::size_t i = 0; i < pids.size(); ++i) {
    json::object report;
    std::string part;
    auto r = inspectProcess(pids[i], o, report, part);
    if (!r) {
      // The named process failing is the command failing; a child that ended meanwhile or
      // cannot be read is reported and the others still are.
      if (i == 0) {
        if (o.json) std::printf("%s\n", json::serialize(json::object{{"error", r.error().message}}).c_str());
        else std::fprintf(stderr, "strata: %s\n", r.error().message.c_str());
        return 1;
      }
      report = json::object{{"pid", pids[i]}, {"error", r.error().message}};
      part = "process " + std::to_string(pids[i]) + ": " + r.error().message + "\n";
      status = 1;
    }
    reports.push_back(std::move(report));
    text += (i ? "\n" : "") + part;
  }
  if (o.json) {
    json::object out = std::move(reports[0].as_object());
    if (o.children) {
      json::array kids(reports.begin() + 1, reports.end());
      out["children"] = std::move(kids);
    }
    std::printf("%s\n", json::serialize(out).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  return status;
}

Result<ParallelStacks> parallelStacks(std::vector<pid_t> pids, bool children, bool pythonOnly) {
  if (children) {
    std::vector<pid_t> named = pids;
    for (pid_t n : named)
      for (pid_t c : descendants(n))
        if (std::find(pids.begin(), pids.end(), c) == pids.end()) pids.push_back(c);
  }
  Options each;
  each.tree = true;
  each.pythonOnly = pythonOnly;
  each.maxFrames = kMaxNativeFrames;
  // Read-only and one process at a time: each is held only while its stacks are read. A
  // launcher that is not Python (mpirun, srun) or a rank that ended meanwhile is listed with
  // why; the tree is of the others.
  std::vector<std::pair<pid_t, json::object>> reports;
  std::string errors;
  for (pid_t pid : pids) {
    json::object report;
    std::string ignored;
    if (auto r = inspectProcess(pid, each, report, ignored); !r) {
      report = json::object{{"pid", pid}, {"error", r.error().message}};
      errors += (errors.empty() ? "" : "; ") + r.error().message;
    }
    reports.emplace_back(pid, std::move(report));
  }
  bool any = std::any_of(reports.begin(), reports.end(), [](const auto& r) { return !r.second.contains("error"); });
  if (!any) return Error{errors::kNoSuchProcess, errors.empty() ? std::string("no process to read") : errors, true};
  return mergeReports(reports, pythonOnly);
}

}  // namespace strata::cli
