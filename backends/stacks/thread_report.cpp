// One process's threads as `strata stacks` reports them: frames merged, folded and listed.
#include "thread_report.hpp"

#include <map>

#include "strata/hex.hpp"

namespace strata::stacks {

namespace json = boost::json;
using namespace strata::native::debugger;
namespace py = strata::python::remote;

// The x86-64 system calls a waiting thread is usually found in.
std::string syscallName(long nr) {
  static const std::map<long, const char*> names{
      {0, "read"}, {1, "write"}, {7, "poll"}, {23, "select"}, {34, "pause"}, {35, "nanosleep"}, {43, "accept"},
      {45, "recvfrom"}, {47, "recvmsg"}, {61, "wait4"}, {202, "futex"}, {219, "restart_syscall"}, {230, "clock_nanosleep"}, {232, "epoll_wait"},
      {247, "waitid"}, {270, "pselect6"}, {271, "ppoll"}, {281, "epoll_pwait"}, {288, "accept4"}, {441, "epoll_pwait2"}};
  auto it = names.find(nr);
  return it != names.end() ? it->second : "syscall " + std::to_string(nr);
}

namespace {

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

}  // namespace

void reportThreads(const Options& o, const std::vector<ThreadStack>& data, const py::PythonSnapshot* snapshot,
                   json::object& out, std::string& text) {
  std::map<pid_t, const py::PythonThread*> pyThreads;
  if (snapshot)
    for (const auto& t : snapshot->threads)
      if (t.tid) pyThreads[t.tid] = &t;
  json::array threadList;
  for (const ThreadStack& d : data) {
    const py::PythonThread* pt = pyThreads.count(d.entry.tid) ? pyThreads[d.entry.tid] : nullptr;
    json::object thread{{"id", d.entry.tid}, {"name", d.entry.name}};
    static const std::vector<FrameEntry> none;
    const std::vector<FrameEntry>& native = d.page ? d.page->frames : none;
    Wait wait = waitOf(native, d.syscall);
    std::string state = d.crash.empty() ? wait.text : "crashed: " + d.crash;
    if (pt && pt->holdsGil) state = "holds the GIL; " + state;
    if (!d.crash.empty()) thread["crashed"] = d.crash;
    thread["python"] = pt != nullptr;
    if (pt) thread["holdsGil"] = pt->holdsGil;
    thread["waitingOn"] = wait.kind;
    if (!wait.syscall.empty()) thread["syscall"] = wait.syscall;
    thread["state"] = state;
    text += "\nthread " + std::to_string(d.entry.tid) + (d.entry.name.empty() ? "" : " \"" + d.entry.name + "\"") + ": " + state + "\n";
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
    for (const auto& t : snapshot->threads)
      if (!t.tid) text += "\n(a Python thread state " + hexAddress(t.threadState) + " names no live thread)\n";
  out["threads"] = std::move(threadList);
}

}  // namespace strata::stacks
