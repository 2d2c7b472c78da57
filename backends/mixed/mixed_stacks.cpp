// Mixed mode's threads and stacks (mixed_backend.hpp): at a native stop the C/C++ frames with
// the Python frames read from memory spliced in; at a Python stop the agent's frames with the
// native frames of a moment's native stop between them.
#include "backends/mixed/mixed_backend.hpp"

#include <algorithm>

namespace strata::backends {

namespace pr = python::remote;

namespace {

// The function a native frame runs, as the merger matches it: "_PyEval_EvalFrameDefault" of
// "_PyEval_EvalFrameDefault (libpython3.12.so+0x1234)".
std::string bareName(const std::string& name) {
  auto paren = name.find(" (");
  return paren == std::string::npos ? name : name.substr(0, paren);
}

// A native frame a merged stack shows: neither libpython's nor the agent's C module's (under a
// Python frame the agent holds).
bool programFrame(const FrameInfo& f) {
  return !interpreterModule(f.moduleId) && f.moduleId.find("/strata/_strata_core") == std::string::npos;
}

// The process's CPython reader, opened the first time it is needed.
Result<pr::PyRemote*> openedReader(std::unique_ptr<pr::PyRemote>& reader, std::int64_t pid) {
  if (!reader) {
    auto r = pr::PyRemote::open(static_cast<pid_t>(pid));
    if (!r) return r.takeError();
    reader = std::move(*r);
  }
  return reader.get();
}

// Where a thread's Python frames go among its native ones (innermost first), or nullopt.
std::optional<std::vector<pr::MergedFrame>> mergeWith(const std::vector<FrameInfo>& native, const pr::PythonThread& thread) {
  std::vector<std::string> names;
  std::vector<std::uint64_t> cfas;
  for (const auto& f : native) {
    names.push_back(bareName(f.name));
    cfas.push_back(f.cfa);
  }
  return pr::mergeStacks(names, thread, cfas);
}

}  // namespace

bool interpreterModule(const std::string& moduleId) {
  std::string base = moduleId.substr(moduleId.rfind('/') == std::string::npos ? 0 : moduleId.rfind('/') + 1);
  return base.rfind("libpython", 0) == 0 || base.rfind("python3", 0) == 0;
}

FrameInfo pythonFrameInfo(const pr::PythonFrame& pf, std::int64_t id) {
  FrameInfo f;
  f.id = id;
  f.name = pf.function;
  SourceInfo src;
  src.name = pf.file.substr(pf.file.rfind('/') == std::string::npos ? 0 : pf.file.rfind('/') + 1);
  if (!pf.file.empty() && pf.file.front() == '/') src.path = pf.file;
  f.source = src;
  f.line = pf.line;
  f.column = 1;
  return f;
}

// ---- threads and stacks ----

void MixedBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  std::weak_ptr<bool> alive = alive_;
  auto fromNative = [this, alive, reply](Result<std::vector<ThreadInfo>> r) {
    if (alive.expired()) return;
    if (!r) return reply(r.takeError());
    std::vector<ThreadInfo> out;
    for (auto t : *r) {
      if (t.name.rfind("strata.", 0) == 0) continue;  // the agent's own threads
      if (auto n = pythonNames_.find(t.id); n != pythonNames_.end()) t.name = n->second;
      out.push_back(std::move(t));
    }
    reply(std::move(out));
  };
  // While the agent can answer, its names (threading's) are the ones users gave their threads.
  if (nativeStop_) return native_->threads(fromNative);
  if (!nativeIn_) return py_->threads(fromNative);
  py_->threads([this, alive, fromNative](Result<std::vector<ThreadInfo>> r) {
    if (alive.expired()) return;
    if (r)
      for (const auto& t : *r) pythonNames_[t.id] = t.name;
    native_->threads(fromNative);
  });
}

bool MixedBackend::agentFile(const std::string& path) const {
  if (path.rfind("<frozen runpy>", 0) == 0) return true;
  return !agentDir_.empty() && path.rfind(agentDir_ + "/strata/", 0) == 0;
}

Result<const pr::PythonSnapshot*> MixedBackend::pythonState() {
  if (pyState_) return &*pyState_;
  auto reader = openedReader(remote_, pid_);
  if (!reader) return reader.takeError();
  pr::ReadOptions o;
  o.locals = true;
  auto snap = (*reader)->snapshot(o);
  if (!snap) return snap.takeError();
  pyState_ = std::move(*snap);
  return &*pyState_;
}

void MixedBackend::mergedStack(std::int64_t threadId, Reply<std::vector<FrameInfo>> reply) {
  if (auto m = merged_.find(threadId); m != merged_.end()) return reply(m->second);
  std::weak_ptr<bool> alive = alive_;
  native_->stackTrace(threadId, 0, 1024, [this, alive, threadId, reply](Result<StackPage> r) {
    if (alive.expired()) return;
    if (!r) return reply(r.takeError());
    std::vector<FrameInfo> native = std::move(r->frames);
    ownedBy(native_.get(), native);
    const pr::PythonThread* pt = nullptr;
    std::string why;
    if (auto st = pythonState(); st) {
      for (const auto& t : (*st)->threads)
        if (t.tid == threadId) pt = &t;
    } else {
      why = st.error().message;
    }
    auto merged = pt ? mergeWith(native, *pt) : std::nullopt;
    std::vector<FrameInfo> out;
    auto pythonFrame = [&](const pr::PythonFrame& pf) {
      if (pf.isShim || agentFile(pf.file)) return;
      std::int64_t local = nextMemoryId_++;
      MemoryFrame mf;
      if (pf.locals) {
        mf.locals = *pf.locals;
        mf.localsRead = true;
      }
      memoryFrames_[local] = std::move(mf);
      out.push_back(pythonFrameInfo(pf, local));  // a memory frame: ours (no owner)
    };
    auto nativeFrame = [&](const FrameInfo& f) {
      if (programFrame(f)) out.push_back(f);
    };
    if (merged) {
      for (const auto& m : *merged) m.python ? pythonFrame(pt->frames[m.index]) : nativeFrame(native[m.index]);
    } else {
      // Stacks that do not fit together (or no Python in this thread): Python frames first.
      if (pt)
        for (const auto& pf : pt->frames) pythonFrame(pf);
      for (const auto& f : native) nativeFrame(f);
      if (!why.empty())
        host_.output(OutputCategory::Console, "The Python frames could not be read from memory: " + why + "\n");
    }
    merged_[threadId] = out;
    reply(std::move(out));
  });
}

void MixedBackend::stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                              Reply<StackPage> reply) {
  auto page = [startFrame, levels, reply](Result<std::vector<FrameInfo>> r) {
    if (!r) return reply(r.takeError());
    StackPage p;
    p.totalFrames = static_cast<std::int64_t>(r->size());
    std::size_t from = std::min<std::size_t>(static_cast<std::size_t>(std::max<std::int64_t>(startFrame, 0)), r->size());
    std::size_t to = levels > 0 ? std::min(r->size(), from + static_cast<std::size_t>(levels)) : r->size();
    p.frames.assign(r->begin() + static_cast<std::ptrdiff_t>(from), r->begin() + static_cast<std::ptrdiff_t>(to));
    reply(std::move(p));
  };
  if (nativeStop_) return mergedStack(threadId, page);
  if (pythonStops_.count(threadId) && nativeIn_) return pythonStopStack(threadId, page);
  py_->stackTrace(threadId, startFrame, levels, ownedBy(py_.get(), std::move(reply)));
}

// At a Python stop the agent has the Python frames (with everything a Python debugger shows);
// the native frames around them come from a moment's native stop of the program, and the
// memory read made in that moment says where the Python frames go among them.
void MixedBackend::pythonStopStack(std::int64_t threadId, Reply<std::vector<FrameInfo>> reply) {
  if (auto m = pyStacks_.find(threadId); m != pyStacks_.end()) return reply(m->second);
  std::weak_ptr<bool> alive = alive_;
  py_->stackTrace(threadId, 0, 10000, [this, alive, threadId, reply](Result<StackPage> r) {
    if (alive.expired()) return;
    if (!r) return reply(r.takeError());
    std::vector<FrameInfo> agent = std::move(r->frames);
    ownedBy(py_.get(), agent);
    auto snap = std::make_shared<Result<pr::PythonSnapshot>>(Error{errors::kPythonMemory, "not read", false});
    auto readPython = [this, snap]() {
      // On the engine thread, every thread stopped: nothing else uses the reader meanwhile.
      auto reader = openedReader(remote_, pid_);
      *snap = reader ? (*reader)->snapshot(pr::ReadOptions{}) : Result<pr::PythonSnapshot>(reader.takeError());
    };
    native_->sampleStack(threadId, 1024, readPython, [this, alive, threadId, reply, agent, snap](Result<std::vector<FrameInfo>> nr) {
      if (alive.expired()) return;
      if (!nr) host_.output(OutputCategory::Console, "The native frames of thread " + std::to_string(threadId) + " could not be read: " + nr.error().message + "\n");
      std::vector<FrameInfo> out = spliceNative(threadId, agent, nr ? std::move(*nr) : std::vector<FrameInfo>{}, *snap);
      if (pythonStops_.count(threadId)) pyStacks_[threadId] = out;
      reply(std::move(out));
    });
  });
}

std::vector<FrameInfo> MixedBackend::spliceNative(std::int64_t threadId, const std::vector<FrameInfo>& agent,
                                                  std::vector<FrameInfo> native,
                                                  const Result<pr::PythonSnapshot>& snap) {
  const pr::PythonThread* pt = nullptr;
  if (snap)
    for (const auto& t : snap->threads)
      if (t.tid == threadId) pt = &t;
  auto merged = pt ? mergeWith(native, *pt) : std::nullopt;
  // Nothing to splice with: the Python frames as the agent has them, and why.
  auto alone = [&](const std::string& why) {
    if (!native.empty()) host_.output(OutputCategory::Console, "The native frames of thread " + std::to_string(threadId) + " are not shown: " + why + "\n");
    return agent;
  };
  if (!snap) return alone("its Python state could not be read from memory (" + snap.error().message + ")");
  if (!pt) return alone("no Python thread state has that thread id");
  if (!merged) return alone("its native and Python stacks do not fit together");
  auto where = [](const std::string& file, std::int64_t line) { return file + ":" + std::to_string(line); };
  auto sameAs = [&](const FrameInfo& a, const pr::PythonFrame& pf) {
    return a.source && a.source->path.value_or("") == pf.file && a.line == pf.line;
  };
  // Above the agent's innermost frame the thread is in the agent's wait (its own frames and
  // the threading module's): left out. Below it, the program's frames in memory, innermost
  // first, must be the agent's, in order.
  std::size_t top = merged->size();
  for (std::size_t i = 0; i < merged->size() && !agent.empty(); ++i) {
    const auto& m = (*merged)[i];
    if (m.python && !pt->frames[m.index].isShim && sameAs(agent[0], pt->frames[m.index])) {
      top = i;
      break;
    }
  }
  if (top == merged->size()) return alone("the agent's innermost frame is not among the frames in memory");
  std::vector<std::size_t> user;
  for (std::size_t i = top; i < merged->size(); ++i) {
    const auto& m = (*merged)[i];
    if (m.python && !pt->frames[m.index].isShim && !agentFile(pt->frames[m.index].file)) user.push_back(m.index);
  }
  if (user.size() != agent.size()) {
    std::string list;
    for (auto i : user) list += " " + pt->frames[i].function + "@" + where(pt->frames[i].file, pt->frames[i].line);
    return alone("memory shows " + std::to_string(user.size()) + " Python frames (" + list + " ), the agent " +
                 std::to_string(agent.size()));
  }
  for (std::size_t k = 0; k < user.size(); ++k) {
    const auto& pf = pt->frames[user[k]];
    std::string agentAt = agent[k].source ? agent[k].source->path.value_or("") : "";
    if (!sameAs(agent[k], pf))
      return alone("frame " + std::to_string(k) + " is " + where(pf.file, pf.line) + " in memory, " + where(agentAt, agent[k].line) + " for the agent");
  }
  std::vector<FrameInfo> out;
  std::size_t next = 0;
  for (std::size_t i = top; i < merged->size(); ++i) {
    const auto& m = (*merged)[i];
    if (m.python) {
      const auto& pf = pt->frames[m.index];
      if (!pf.isShim && !agentFile(pf.file) && next < agent.size()) out.push_back(agent[next++]);
      continue;
    }
    FrameInfo f = native[m.index];
    if (!programFrame(f)) continue;
    // Shown, not inspectable: the thread's registers are the agent's to keep until it resumes.
    std::int64_t local = nextMemoryId_++;
    memoryFrames_[local] = MemoryFrame{{}, false, true};
    if (f.source && f.source->reference) ownedBy(native_.get(), f.source->owner);
    f.owner = nullptr;  // a memory frame: ours
    f.id = local;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace strata::backends
