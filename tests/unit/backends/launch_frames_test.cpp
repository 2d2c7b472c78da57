// gpuKernel's launch frames as a user reads them: native frames merged with the Python lines,
// CUDA's frames and the kernel's host stub folded, library frames subtle, so the first frame
// that is not subtle is the program's own line.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backends/cuda/service/launch_frames.hpp"

using namespace strata::backends::gpu;
using strata::cuda::PythonFrame;

namespace {

NativeLaunchFrame native(const char* function, const char* module, const char* file = "", int line = 0) {
  NativeLaunchFrame f;
  f.pc = 0x1000;
  f.function = function;
  f.module = module;
  f.file = file;
  f.line = line;
  return f;
}

// "name" for normal frames, "~name" for subtle ones, "[label]".
std::vector<std::string> shown(const std::vector<LaunchFrame>& frames) {
  std::vector<std::string> out;
  for (const LaunchFrame& f : frames) {
    std::string s = f.kind == LaunchFrame::Kind::Label ? "[" + f.name + "]" : (f.subtle ? "~" : "") + f.name;
    if (f.line) s += ":" + std::to_string(f.line);
    out.push_back(s);
  }
  return out;
}

const LaunchFrame* firstUserFrame(const std::vector<LaunchFrame>& frames) {
  for (const LaunchFrame& f : frames)
    if (!f.subtle && f.kind != LaunchFrame::Kind::Label) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("a PyTorch launch: eval-loop frames replaced by the Python frames they ran, torch and CUDA subtle") {
  const std::vector<PythonFrame> python = {
      {"linear", "/usr/lib/python3/dist-packages/torch/nn/functional.py", 1848, 1},
      {"Linear.forward", "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 117, 1},
      {"train_step", "/home/u/train.py", 42, 1},
      {"main", "/home/u/train.py", 50, 2},
  };
  const std::vector<NativeLaunchFrame> frames = {
      native("cudaLaunchKernel", "/opt/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.13"),
      native("at::native::gemm", "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"),
      native("THPVariable_linear", "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_python.so"),
      native("cfunction_call", "/usr/bin/python3.12"),
      native("_PyEval_EvalFrameDefault", "/usr/bin/python3.12"),
      native("_PyFunction_Vectorcall", "/usr/bin/python3.12"),
      native("_PyEval_EvalFrameDefault", "/usr/bin/python3.12"),
      native("Py_RunMain", "/usr/bin/python3.12"),
      native("__libc_start_call_main", "/lib/x86_64-linux-gnu/libc.so.6"),
  };
  auto out = arrangeLaunchFrames(python, frames, "void gemm<float>(float*, int)");
  CHECK(shown(out) == std::vector<std::string>{
                          "~CUDA: cudaLaunchKernel (1 frame in libcudart.so.13)", "~at::native::gemm",
                          "~THPVariable_linear", "~CPython: 1 frame in python3.12", "~linear:1848",
                          "~Linear.forward:117", "train_step:42", "~CPython: 2 frames in python3.12", "main:50",
                          "~CPython: 2 frames in python3.12", "~__libc_start_call_main"});
  REQUIRE(firstUserFrame(out));
  CHECK(firstUserFrame(out)->name == "train_step");
  CHECK(firstUserFrame(out)->file == "/home/u/train.py");
}

TEST_CASE("a native program with its CUDA runtime linked in: the runtime, CUDA's header and the host stub fold; main is first") {
  const std::vector<NativeLaunchFrame> frames = {
      native("cudaLaunchKernel", "/x/vector_add"),
      native("cudaLaunchKernel<char>", "/x/vector_add", "/usr/local/cuda-13.0/include/cuda_runtime.h", 216),
      native("__device_stub__Z10vector_addPKfS0_Pfi", "/x/vector_add", "/tmp/tmpxft_0001_vector_add.cudafe1.stub.c", 1),
      native("vector_add", "/x/vector_add", "/x/vector_add.cu", 9),
      native("main", "/x/vector_add", "/x/vector_add.cu", 28),
      native("__libc_start_call_main", "/lib/x86_64-linux-gnu/libc.so.6", "/build/glibc/csu/libc_start_call_main.h", 58),
  };
  auto out = arrangeLaunchFrames({}, frames, "vector_add(float const*, float const*, float*, int)");
  CHECK(shown(out) == std::vector<std::string>{"~CUDA: vector_add (4 frames in vector_add)", "main:28",
                                               "~__libc_start_call_main:58"});
  CHECK(firstUserFrame(out)->name == "main");
}

TEST_CASE("frames with no evaluation numbers (a trace, an older collector): the Python lines first, then the native frames") {
  const std::vector<PythonFrame> python = {{"step", "/home/u/train.py", 7, 0}};
  auto out = arrangeLaunchFrames(python, {native("_PyEval_EvalFrameDefault", "/usr/lib/libpython3.12.so.1.0"),
                                          native("", "/usr/lib/x86_64-linux-gnu/libcublasLt.so.13")},
                                 "k");
  CHECK(shown(out) == std::vector<std::string>{"step:7", "~CPython: 1 frame in libpython3.12.so.1.0",
                                               "~CUDA: libcublasLt.so.13 (1 frame in libcublasLt.so.13)"});
}

TEST_CASE("evaluations the native frames do not reach follow at the end") {
  const std::vector<PythonFrame> python = {{"inner", "/home/u/a.py", 3, 1}, {"outer", "/home/u/a.py", 9, 2}};
  auto out = arrangeLaunchFrames(python, {native("_PyEval_EvalFrameDefault", "/usr/bin/python3.11")}, "k");
  CHECK(shown(out) == std::vector<std::string>{"inner:3", "~CPython: 1 frame in python3.11", "outer:9"});
}

TEST_CASE("a frame no symbol names is its module and offset") {
  NativeLaunchFrame f;
  f.pc = 0x7f0012345678;
  f.module = "/opt/lib/libfoo.so.2";
  f.moduleOffset = 0x1a2b;
  auto out = arrangeLaunchFrames({}, {f}, "k");
  REQUIRE(out.size() == 1);
  CHECK(out[0].name == "libfoo.so.2+0x1a2b");
  CHECK(out[0].subtle);
}

TEST_CASE("whose files are the user's own") {
  CHECK(isUserPythonFile("/home/u/train.py"));
  CHECK_FALSE(isUserPythonFile("<frozen importlib._bootstrap>"));
  CHECK_FALSE(isUserPythonFile("<strata-gpu-hooks>"));
  CHECK_FALSE(isUserPythonFile("/usr/lib/python3.11/threading.py"));
  CHECK_FALSE(isUserPythonFile("/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/events.py"));
  CHECK_FALSE(isUserPythonFile("/opt/venv/lib/python3.12/site-packages/torch/_tensor.py"));
  CHECK_FALSE(isUserPythonFile("/usr/lib/python3/dist-packages/torch/autograd/__init__.py"));
  CHECK(isUserNativeFile("/x/vector_add.cu"));
  CHECK_FALSE(isUserNativeFile("/usr/include/c++/12/bits/stl_vector.h"));
  CHECK_FALSE(isUserNativeFile("/usr/local/cuda-13.0/include/cuda_runtime.h"));
  CHECK_FALSE(isUserNativeFile(""));
  CHECK(isCudaModule("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  CHECK(isCudaModule("libcublasLt.so.13"));
  CHECK_FALSE(isCudaModule("/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"));
  CHECK(isInterpreterModule("/usr/bin/python3.12"));
  CHECK(isInterpreterModule("/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0"));
  CHECK_FALSE(isInterpreterModule("/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so"));
}
