// A kernel's launch frames merged, folded and marked for display (see launch_frames.hpp).
#include "backends/cuda/service/launch_frames.hpp"

#include <algorithm>
#include <cstdio>

#include "strata/cuda_frames.hpp"
#include "strata/python/remote/py_remote.hpp"

namespace strata::backends::gpu {

namespace {

std::string_view base(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A run of frames shown as one: CUDA's (the runtime, the driver, the libraries and the kernel's
// host stub between the program and the launch), or the interpreter's own.
class Fold {
 public:
  enum class What { None, Cuda, Interpreter };
  void add(What what, const NativeLaunchFrame& f, std::vector<LaunchFrame>& out) {
    if (what != what_) flush(out);
    what_ = what;
    ++count_;
    outer_ = f;  // innermost first: the last one added is the outermost, what the program called
    const std::string_view m = base(f.module);
    if (!m.empty() && std::find(modules_.begin(), modules_.end(), m) == modules_.end()) modules_.emplace_back(m);
  }
  void flush(std::vector<LaunchFrame>& out) {
    if (!count_) return;
    LaunchFrame f;
    f.kind = LaunchFrame::Kind::Folded;
    f.subtle = true;
    f.pc = outer_.pc;
    std::string where;
    for (const std::string& m : modules_) where += (where.empty() ? "" : ", ") + m;
    const std::string frames = std::to_string(count_) + (count_ == 1 ? " frame" : " frames");
    if (what_ == What::Cuda) {
      f.name = "CUDA: " + (outer_.function.empty() ? std::string(base(outer_.module)) : outer_.function) + " (" + frames +
               (where.empty() ? "" : " in " + where) + ")";
    } else {
      f.name = "CPython: " + frames + (where.empty() ? "" : " in " + where);
    }
    out.push_back(std::move(f));
    count_ = 0;
    modules_.clear();
    what_ = What::None;
  }

 private:
  What what_ = What::None;
  int count_ = 0;
  NativeLaunchFrame outer_;
  std::vector<std::string> modules_;
};

LaunchFrame pythonFrame(const cuda::PythonFrame& f) {
  LaunchFrame out;
  out.kind = LaunchFrame::Kind::Python;
  out.name = f.function.empty() ? "<unknown>" : f.function;
  out.file = f.file;
  out.line = f.line;
  out.subtle = !isUserPythonFile(f.file);
  return out;
}

void nativeFrame(const NativeLaunchFrame& f, std::string_view kernel, Fold& fold, std::vector<LaunchFrame>& out) {
  if (isCudaNativeFrame(f, kernel)) return fold.add(Fold::What::Cuda, f, out);
  if (isInterpreterModule(f.module)) return fold.add(Fold::What::Interpreter, f, out);
  fold.flush(out);
  LaunchFrame n;
  n.kind = LaunchFrame::Kind::Native;
  n.pc = f.pc;
  if (!f.function.empty()) n.name = f.function;
  else if (!f.module.empty()) n.name = std::string(base(f.module)) + "+" + hex(f.moduleOffset);
  else n.name = hex(f.pc);
  n.file = f.file;
  n.line = f.line;
  n.subtle = !isUserNativeFile(f.file);
  out.push_back(std::move(n));
}

}  // namespace

bool isCudaModule(std::string_view module) {
  const std::string_view b = base(module);
  for (std::string_view p : {"libcuda.", "libcudart", "libcupti", "libcublas", "libcudnn", "libcufft", "libcurand",
                             "libcusparse", "libcusolver", "libnccl", "libnvrtc", "libnvJitLink", "libnvToolsExt",
                             "libnvperf", "libcufile", "libstrata_cupti"})
    if (startsWith(b, p)) return true;
  return false;
}

bool isInterpreterModule(std::string_view module) {
  const std::string_view b = base(module);
  return startsWith(b, "libpython") || startsWith(b, "python");
}

bool isUserPythonFile(std::string_view file) {
  if (file.empty() || file[0] == '<') return false;  // <frozen ...>, <string>, Strata's hooks
  if (file.find("/site-packages/") != std::string_view::npos || file.find("/dist-packages/") != std::string_view::npos)
    return false;
  // The standard library: .../lib/python3.N/...
  if (auto at = file.find("/lib/python3."); at != std::string_view::npos) {
    const std::string_view rest = file.substr(at + 13);
    const auto slash = rest.find('/');
    if (slash != std::string_view::npos && rest.substr(0, slash).find_first_not_of("0123456789") == std::string_view::npos)
      return false;
  }
  return true;
}

bool isUserNativeFile(std::string_view file) {
  if (file.empty() || file[0] != '/') return false;
  for (std::string_view p : {"/usr/include/", "/usr/lib/", "/usr/src/", "/usr/local/cuda", "/usr/local/include/",
                             "/opt/nvidia/", "/build/", "/opt/conda/conda-bld/"})
    if (startsWith(file, p)) return false;
  return file.find("/site-packages/") == std::string_view::npos && file.find("/dist-packages/") == std::string_view::npos &&
         file.find("/cuda/include/") == std::string_view::npos;
}

bool isCudaNativeFrame(const NativeLaunchFrame& f, std::string_view kernel) {
  if (isCudaModule(f.module) || cuda_frames::isRuntimeFunction(f.function) || cuda_frames::isCudaHeader(f.file))
    return true;
  // The kernel's host stub: the host function of the kernel's own name that nvcc generates.
  return !kernel.empty() && !f.function.empty() && cuda_frames::baseName(f.function) == cuda_frames::baseName(kernel);
}

std::vector<LaunchFrame> arrangeLaunchFrames(const std::vector<cuda::PythonFrame>& python,
                                             const std::vector<NativeLaunchFrame>& native, std::string_view kernel) {
  std::vector<LaunchFrame> out;
  Fold fold;
  const bool numbered = !python.empty() && std::all_of(python.begin(), python.end(), [](const cuda::PythonFrame& f) {
    return f.evalCall > 0;
  });
  bool evalFrames = false;
  for (const NativeLaunchFrame& f : native) evalFrames = evalFrames || python::remote::isEvalFrameFunction(f.function);
  if (!numbered || !evalFrames) {
    // Nothing to merge on (no Python, a trace's frames, an interpreter whose eval loop has no
    // name here): the Python lines first, then the native frames.
    for (const cuda::PythonFrame& f : python) out.push_back(pythonFrame(f));
    for (const NativeLaunchFrame& f : native) nativeFrame(f, kernel, fold, out);
    fold.flush(out);
    return out;
  }
  // Each _PyEval_EvalFrameDefault frame, innermost first, runs the next evaluation's Python
  // frames: they stand right before it. Evaluations the native frames do not reach (the
  // collector keeps the innermost frames of each list) follow at the end.
  std::size_t py = 0;
  int call = 1;
  for (const NativeLaunchFrame& f : native) {
    if (python::remote::isEvalFrameFunction(f.function)) {
      fold.flush(out);
      for (; py < python.size() && python[py].evalCall <= call; ++py) out.push_back(pythonFrame(python[py]));
      ++call;
    }
    nativeFrame(f, kernel, fold, out);
  }
  fold.flush(out);
  for (; py < python.size(); ++py) out.push_back(pythonFrame(python[py]));
  return out;
}

}  // namespace strata::backends::gpu
