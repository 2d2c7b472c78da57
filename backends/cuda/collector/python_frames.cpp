// The calling thread's Python frames read in its own process (see python_frames.hpp): the
// layout of strata stacks' memory reader (the process's _Py_DebugOffsets on 3.13+, the tables
// generated from CPython's headers before), applied to this process's own memory.
#include "python_frames.hpp"

#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include "strata/python/remote/layout.hpp"
#include "strata/python/remote/py_remote.hpp"

namespace strata::cuda::collector {

namespace py = strata::python::remote;

namespace {

constexpr int kChainLimit = 100000;  // a longer chain is a loop: the walk stops
constexpr std::size_t kMaxText = 4096;

template <class T>
T load(std::uint64_t address) {
  T v;
  std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof v);
  return v;
}

void* symbol(const char* name) { return dlsym(RTLD_DEFAULT, name); }

// "3.10.13 (main, ...)" -> 0x030A0DF0.
std::uint64_t versionFromText(const char* text) {
  if (!text) return 0;
  unsigned parts[3] = {0, 0, 0};
  const char* p = text;
  const char* end = text + std::strlen(text);
  for (int i = 0; i < 3 && p < end; ++i) {
    auto r = std::from_chars(p, end, parts[i]);
    if (r.ec != std::errc()) break;
    p = r.ptr;
    if (p < end && *p == '.') ++p;
    else break;
  }
  return (std::uint64_t{parts[0]} << 24) | (std::uint64_t{parts[1]} << 16) | (std::uint64_t{parts[2]} << 8) | 0xf0;
}

void appendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace

struct PythonFrames::State {
  bool ok = false;
  std::string what;  // what was found, or why nothing
  py::PyLayout L;
  std::uint64_t runtime = 0;
  std::uint64_t codeType = 0, frameType = 0, unicodeType = 0, bytesType = 0;
  void* (*thisThreadState)() = nullptr;
  int (*addPending)(int (*)(void*), void*) = nullptr;
  int (*runString)(const char*, void*) = nullptr;  // PyRun_SimpleStringFlags
  bool vmRead = false;  // process_vm_readv works on this process (resolution may come later)

  // Reads for resolve(): through process_vm_readv (a freed object reads as a failure), or
  // directly where that is refused (then only while the frames run).
  bool read(std::uint64_t address, void* out, std::size_t size) const {
    if (!address) return false;
    if (!vmRead) {
      std::memcpy(out, reinterpret_cast<const void*>(address), size);
      return true;
    }
    iovec local{out, size};
    iovec remote{reinterpret_cast<void*>(address), size};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
  }
  std::uint64_t ptr(std::uint64_t address) const {
    std::uint64_t v = 0;
    return read(address, &v, sizeof v) ? v : 0;
  }
  std::uint64_t typeOf(std::uint64_t object) const { return object ? ptr(object + 8) : 0; }

  bool unicode(std::uint64_t object, std::string& out) const {
    if (!object || typeOf(object) != unicodeType) return false;
    std::int64_t length = 0;
    std::uint32_t state = 0;
    if (!read(object + L.unicodeLength, &length, sizeof length) || !read(object + L.unicodeState, &state, sizeof state))
      return false;
    const unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4)) return false;
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(length), kMaxText);
    std::string raw(n * kind, '\0');
    if (n && !read(object + (ascii ? L.unicodeAsciiSize : L.unicodeCompactSize), raw.data(), raw.size())) return false;
    if (kind == 1 && ascii) {
      out = std::move(raw);
      return true;
    }
    out.clear();
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t cp = 0;
      std::memcpy(&cp, raw.data() + i * kind, kind);
      appendUtf8(out, cp);
    }
    return true;
  }

  bool bytes(std::uint64_t object, std::string& out) const {
    if (!object || typeOf(object) != bytesType) return false;
    std::int64_t size = 0;
    if (!read(object + L.bytesSize, &size, sizeof size) || size < 0 || size > (1 << 20)) return false;
    out.assign(static_cast<std::size_t>(size), '\0');
    return size == 0 || read(object + L.bytesData, out.data(), out.size());
  }

  void init();
};

void PythonFrames::State::init() {
  runtime = reinterpret_cast<std::uint64_t>(symbol("_PyRuntime"));
  if (!runtime) {
    what = "no CPython in this process (no _PyRuntime symbol)";
    return;
  }
  std::uint64_t hex = 0;
  if (auto* v = static_cast<const unsigned long*>(symbol("Py_Version"))) {
    hex = *v;
  } else if (auto getVersion = reinterpret_cast<const char* (*)()>(symbol("Py_GetVersion"))) {
    hex = versionFromText(getVersion());  // 3.10 has no Py_Version
  }
  const int major = static_cast<int>((hex >> 24) & 0xff), minor = static_cast<int>((hex >> 16) & 0xff);
  const std::string version = py::versionText(hex);
  if (major != 3 || minor < 10) {
    what = "CPython " + version + ": Python launch frames are read from CPython 3.10 on";
    return;
  }
  Result<py::PyLayout> layout = minor >= 13 ? py::layoutFromDebugOffsets(reinterpret_cast<const void*>(runtime), 2048, hex)
                                            : py::builtLayoutFor(minor, hex);
  if (!layout) {
    what = "CPython " + version + ": " + layout.error().message;
    return;
  }
  L = std::move(*layout);
  codeType = reinterpret_cast<std::uint64_t>(symbol("PyCode_Type"));
  frameType = reinterpret_cast<std::uint64_t>(symbol("PyFrame_Type"));
  unicodeType = reinterpret_cast<std::uint64_t>(symbol("PyUnicode_Type"));
  bytesType = reinterpret_cast<std::uint64_t>(symbol("PyBytes_Type"));
  thisThreadState = reinterpret_cast<void* (*)()>(symbol("PyGILState_GetThisThreadState"));
  addPending = reinterpret_cast<int (*)(int (*)(void*), void*)>(symbol("Py_AddPendingCall"));
  runString = reinterpret_cast<int (*)(const char*, void*)>(symbol("PyRun_SimpleStringFlags"));
  if (!codeType || !unicodeType || !bytesType || !thisThreadState || (L.frameObjects && !frameType)) {
    what = "CPython " + version + " does not export PyCode_Type, PyUnicode_Type, PyBytes_Type, PyFrame_Type or "
           "PyGILState_GetThisThreadState";
    return;
  }
  // process_vm_readv on this very process: allowed unless a seccomp profile forbids the call.
  std::uint64_t probe = 0x5354524154414721ull, copy = 0;
  iovec local{&copy, sizeof copy};
  iovec remote{&probe, sizeof probe};
  vmRead = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof copy && copy == probe;

  // The layout must fit this process: the first interpreter's first thread state names it.
  if (vmRead) {
    const std::uint64_t interp = ptr(runtime + L.runtimeInterpretersHead);
    const std::uint64_t tstate = interp ? ptr(interp + L.interpThreadsHead) : 0;
    if (tstate && ptr(tstate + L.tstateInterp) != interp) {
      what = "CPython " + version + ": its memory does not fit the " + L.source +
             " (a thread state names another interpreter)";
      return;
    }
  }
  what = "CPython " + version + " (" + L.source + ")" +
         (vmRead ? "" : "; process_vm_readv is refused here, so names are read at the launch itself");
  ok = true;
}

PythonFrames::PythonFrames() : s_(std::make_unique<State>()) {}
PythonFrames::~PythonFrames() = default;

bool PythonFrames::available() {
  std::call_once(once_, [this] { s_->init(); });
  return s_->ok;
}

std::string PythonFrames::describe() {
  available();
  return s_->what;
}

bool PythonFrames::resolvesLater() { return available() && s_->vmRead; }

int PythonFrames::top(RawPythonFrame* out, int n, int skip) {
  if (!available() || n <= 0) return 0;
  const State& s = *s_;
  const py::PyLayout& L = s.L;
  // Thread states of a finalizing runtime may be freed under us.
  if (L.runtimeFinalizing != py::kAbsent && load<std::uint64_t>(s.runtime + L.runtimeFinalizing)) return 0;
  const auto ts = reinterpret_cast<std::uint64_t>(s.thisThreadState());
  if (!ts) return 0;
  std::uint64_t frame = load<std::uint64_t>(ts + L.tstateFrame);
  if (L.cframeCurrentFrame != py::kAbsent && frame) frame = load<std::uint64_t>(frame + L.cframeCurrentFrame);
  int k = 0, seen = 0;
  std::uint16_t eval = 0;  // the _PyEval_EvalFrameDefault call the next frame belongs to
  for (int guard = 0; frame && k < n && guard < kChainLimit; ++guard) {
    const auto next = load<std::uint64_t>(frame + L.framePrevious);
    std::uint64_t code = 0;
    std::int32_t lasti = -1;
    std::uint16_t call = eval;
    if (L.frameObjects) {
      // 3.10: a chain of frame objects, each run by a _PyEval_EvalFrameDefault call of its own.
      if (load<std::uint64_t>(frame + 8) != s.frameType) break;
      code = load<std::uint64_t>(frame + L.frameCode);
      lasti = load<std::int32_t>(frame + L.frameLasti);
      ++eval;
    } else {
      const auto owner = load<std::uint8_t>(frame + L.frameOwner);
      if (owner > L.shimOwnerLast) break;  // not a frame of this layout: stop rather than guess
      if (owner >= static_cast<std::uint8_t>(L.shimOwnerFirst)) {
        ++eval;  // the entry frame a _PyEval_EvalFrameDefault call pushes: the call's base
        frame = next;
        continue;
      }
      code = load<std::uint64_t>(frame + L.frameCode) & ~L.stackRefTagBits;
      const auto instr = static_cast<std::int64_t>(load<std::uint64_t>(frame + L.frameInstr));
      const std::int64_t units = (instr - static_cast<std::int64_t>(code + L.codeAdaptive)) / 2;
      lasti = units < 0 || units > (1 << 30) ? -1 : static_cast<std::int32_t>(units);
      if (L.frameIsEntry != py::kAbsent && load<std::uint8_t>(frame + L.frameIsEntry)) ++eval;  // 3.11
    }
    if (!code || load<std::uint64_t>(code + 8) != s.codeType) break;
    if (seen++ >= skip) out[k++] = RawPythonFrame{code, lasti, static_cast<std::uint16_t>(call + 1), 0};
    frame = next;
  }
  return k;
}

void PythonFrames::resolve(const RawPythonFrame* frames, int n, std::vector<PythonFrameText>& out) {
  if (!available()) return;
  const State& s = *s_;
  const py::PyLayout& L = s.L;
  struct Code {
    bool ok = false;
    std::string function, file, table;
    int firstLine = 0;
  };
  std::unordered_map<std::uint64_t, Code> codes;  // one batch: a code object is read once
  for (int i = 0; i < n; ++i) {
    const RawPythonFrame& f = frames[i];
    auto [it, added] = codes.try_emplace(f.code);
    Code& c = it->second;
    if (added && s.typeOf(f.code) == s.codeType) {
      const std::uint64_t name = s.ptr(f.code + (L.codeQualname != py::kAbsent ? L.codeQualname : L.codeName));
      c.ok = s.unicode(s.ptr(f.code + L.codeFilename), c.file) && s.unicode(name, c.function);
      s.read(f.code + L.codeFirstlineno, &c.firstLine, sizeof c.firstLine);
      if (c.ok) s.bytes(s.ptr(f.code + L.codeLinetable), c.table);
    }
    PythonFrameText t;
    t.evalCall = f.evalCall;
    if (!c.ok) {
      t.function = "<code object gone>";
      out.push_back(std::move(t));
      continue;
    }
    t.function = c.function;
    t.file = c.file;
    if (f.lasti < 0) t.line = c.firstLine;
    else if (L.frameObjects) t.line = py::lineFromLineTable310(c.table, c.firstLine, static_cast<std::uint64_t>(f.lasti));
    else t.line = py::lineFromLocationTable(c.table, c.firstLine, static_cast<std::uint64_t>(f.lasti));
    out.push_back(std::move(t));
  }
}

bool PythonFrames::addPendingCall(int (*fn)(void*), void* arg) {
  if (!available() || !s_->addPending) return false;
  const py::PyLayout& L = s_->L;
  if (L.runtimeFinalizing != py::kAbsent && load<std::uint64_t>(s_->runtime + L.runtimeFinalizing)) return false;
  return s_->addPending(fn, arg) == 0;
}

int PythonFrames::runSimpleString(const char* code) {
  if (!available() || !s_->runString) return -1;
  return s_->runString(code, nullptr);
}

}  // namespace strata::cuda::collector
