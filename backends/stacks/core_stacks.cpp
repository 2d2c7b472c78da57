// A core file's threads, read as `strata stacks` reads a live process: native frames unwound
// from each thread's saved registers through the core's memory, Python frames read from it.
#include <algorithm>

#include "backends/native/debugger/convert.hpp"
#include "strata/hex.hpp"
#include "strata/native/engine/signals.hpp"
#include "strata/stacks/core_process.hpp"
#include "thread_report.hpp"

namespace strata::stacks {

namespace {

namespace json = boost::json;
namespace sym = strata::native::symbols;
namespace py = strata::python::remote;
using native::debugger::FrameEntry;
using native::debugger::FramePage;

constexpr std::size_t kMaxNativeFrames = 8192;

// The core as the Python reader sees a process.
class CoreImage : public py::ProcessImage {
 public:
  explicit CoreImage(core::CoreFile& core) : core_(core) {}
  pid_t pid() const override { return core_.pid(); }
  std::string describe() const override { return "the core " + core_.path(); }
  bool read(std::uint64_t address, void* buffer, std::size_t size) override {
    return static_cast<bool>(core_.read(address, buffer, size));
  }
  std::vector<Mapping> mappings() override { return core_.mappings(); }
  std::vector<std::string> localPaths(const std::string& mapped) override { return {core_.localPath(mapped)}; }
  std::set<pid_t> threadIds() override {
    std::set<pid_t> out;
    for (const auto& t : core_.threads()) out.insert(t.registers.tid);
    return out;
  }

 private:
  core::CoreFile& core_;
};

FrameEntry frameEntry(const sym::Frame& f, const sym::RawFrame& raw) {
  FrameEntry out = native::debugger::toFrameEntry(f, 0);
  if (raw.cfaKnown) out.cfa = raw.cfa;
  return out;
}

}  // namespace

CoreProcess::CoreProcess() : modules_(cache_) {}

Result<std::unique_ptr<CoreProcess>> CoreProcess::open(const std::string& path, const core::CoreOptions& options) {
  auto opened = core::CoreFile::open(path, options);
  if (!opened) return opened.takeError();
  std::unique_ptr<CoreProcess> p(new CoreProcess());
  p->core_ = std::move(opened).value();
  for (const auto& object : p->core_->objects()) (void)p->modules_.add(object);
  auto unwinder = sym::RemoteUnwinder::create();
  if (!unwinder) return unwinder.takeError();
  p->unwinder_ = std::move(unwinder).value();
  return p;
}

Result<sym::StackView*> CoreProcess::stack(pid_t tid) {
  if (auto it = stacks_.find(tid); it != stacks_.end()) return it->second.get();
  for (const auto& t : core_->threads()) {
    if (t.registers.tid != tid) continue;
    auto raw = unwinder_->unwindImage(t.registers, *core_, modules_, kMaxNativeFrames);
    if (!raw) return raw.takeError();
    auto view = std::make_unique<sym::StackView>(std::move(raw).value(), modules_);
    return stacks_.emplace(tid, std::move(view)).first->second.get();
  }
  return Error{errors::kNoSuchThread, "the core holds no thread " + std::to_string(tid), true};
}

const py::PythonSnapshot* CoreProcess::python(bool locals) {
  if (snapshot_ && (!locals || snapshotLocals_)) return &*snapshot_;
  if (pythonTried_ && !remote_) return nullptr;
  pythonTried_ = true;
  if (!remote_) {
    auto r = py::PyRemote::open(std::make_shared<CoreImage>(*core_), layoutMinor_);
    if (!r) {
      if (r.error().id != errors::kNoPythonRuntime) pythonError_ = r.error().message;
      return nullptr;
    }
    remote_ = std::move(r).value();
  }
  py::ReadOptions ro;
  ro.locals = locals;
  auto snap = remote_->snapshot(ro);
  if (!snap) {
    pythonError_ = snap.error().message;
    return nullptr;
  }
  snapshot_ = std::move(snap).value();
  snapshotLocals_ = locals;
  return &*snapshot_;
}

long CoreProcess::syscallOf(const native::ThreadRegisters& registers) {
  auto nr = static_cast<long>(registers.gpr.orig_rax);
  if (nr < 0) return -1;
  unsigned char insn[2] = {};
  if (!core_->read(registers.gpr.rip - 2, insn, 2) || insn[0] != 0x0f || insn[1] != 0x05) return -1;
  return nr;
}

std::string CoreProcess::crashOf(const core::CoreThread& thread) const {
  if (thread.signal == 0) return {};
  const auto& s = core_->signal();
  if (s && s->signo == thread.signal) return s->description;
  return native::engine::signalName(thread.signal);
}

Result<void> inspectCore(const std::string& path, const core::CoreOptions& coreOptions, const Options& o,
                         json::object& out, std::string& text) {
  auto opened = CoreProcess::open(path, coreOptions);
  if (!opened) return opened.takeError();
  CoreProcess& p = **opened;
  p.layoutMinor_ = o.layoutMinor;
  core::CoreFile& core = p.core();

  out["core"] = path;
  out["pid"] = core.pid();
  out["command"] = core.command();
  out["arguments"] = core.arguments();
  out["executable"] = core.executable();
  text += "core " + path + ": process " + std::to_string(core.pid()) + " (" +
          (core.arguments().empty() ? core.command() : core.arguments()) + ")";
  if (const auto& s = core.signal()) {
    out["signal"] = json::object{{"name", native::engine::signalName(s->signo)}, {"number", s->signo}, {"code", s->code},
                                 {"address", hexAddress(s->address)}, {"description", s->description}};
    text += ", ended by " + s->description;
  }
  text += "\n";
  json::array problems;
  for (const auto& problem : core.problems()) {
    problems.push_back(json::string(problem));
    text += "  (" + problem + ")\n";
  }
  out["problems"] = std::move(problems);

  const py::PythonSnapshot* snapshot = nullptr;
  if (!o.nativeOnly) {
    snapshot = p.python(o.locals);
    if (!snapshot && (o.pythonOnly || o.layoutMinor) && !p.pythonError().empty())
      return Error{errors::kPythonLayout, p.pythonError(), true};
    if (!snapshot && o.pythonOnly) return Error{errors::kNoPythonRuntime, "the core " + path + " holds no CPython", true};
    if (!p.pythonError().empty()) {
      out["pythonError"] = p.pythonError();
      text += "  (Python frames not read: " + p.pythonError() + ")\n";
    }
  }
  std::vector<ThreadStack> data;
  for (const auto& t : core.threads()) {
    ThreadStack d{native::engine::ThreadEntry{t.registers.tid, t.registers.tid == core.pid() ? core.command() : ""}};
    d.syscall = p.syscallOf(t.registers);
    d.crash = p.crashOf(t);
    if (!o.pythonOnly) {
      auto view = p.stack(t.registers.tid);
      if (!view) {
        d.page = view.takeError();
      } else {
        FramePage page;
        page.totalFrames = (*view)->totalFrames();
        for (const auto& f : (*view)->frames(0, page.totalFrames)) page.frames.push_back(frameEntry(f, (*view)->raw(f.physicalIndex)));
        d.page = std::move(page);
      }
    }
    data.push_back(std::move(d));
  }
  if (snapshot) {
    out["python"] = json::object{{"version", snapshot->version}, {"layout", snapshot->layoutSource}, {"gilLocked", snapshot->gilLocked}};
    text += "CPython " + snapshot->version + ", ";
  }
  text += std::to_string(data.size()) + " threads\n";
  reportThreads(o, data, snapshot, out, text);
  return {};
}

}  // namespace strata::stacks
