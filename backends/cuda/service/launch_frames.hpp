// A kernel's launch frames as a user reads them (gpuKernel): the native frames merged with the
// Python lines the way strata stacks merges them (each _PyEval_EvalFrameDefault frame replaced
// by the Python frames it ran, the interpreter's own frames folded), CUDA's runtime, driver and
// libraries and the kernel's host stub folded into one subtle frame, library frames subtle, so
// that the first frame that is neither subtle nor a label is the user's own line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/cuda/record.hpp"

namespace strata::backends::gpu {

// A native frame as resolved for display: its function, module and (from DWARF) source line.
struct NativeLaunchFrame {
  std::uint64_t pc = 0;  // the return address (0: unknown)
  std::string function;  // demangled; "" when no symbol names it
  std::string module;    // path of the module; "" when unknown
  std::uint64_t moduleOffset = 0;
  std::string file;  // absolute path of the calling line's file; "" when no line is known
  int line = 0;
};

struct LaunchFrame {
  enum class Kind { Python, Native, Folded, Label } kind = Kind::Native;
  std::string name;
  std::string file;  // Python: co_filename; native: the calling line's file
  int line = 0;
  std::uint64_t pc = 0;  // native and folded: the return address (folded: the outermost one)
  bool subtle = false;
};

// One site's frames, merged and folded. `kernel` is the launched kernel's demangled name (its
// host stub is folded with CUDA's frames).
std::vector<LaunchFrame> arrangeLaunchFrames(const std::vector<cuda::PythonFrame>& python,
                                             const std::vector<NativeLaunchFrame>& native, std::string_view kernel);

// Which frames are not the user's own (shown subtle): CUDA's libraries and runtime, the
// interpreter, installed packages, the standard library, system libraries.
bool isCudaModule(std::string_view module);
bool isInterpreterModule(std::string_view module);
bool isUserPythonFile(std::string_view file);
bool isUserNativeFile(std::string_view file);
// A CUDA runtime function compiled into the program (a statically linked cudart), a kernel's
// host stub, or a line of CUDA's headers.
bool isCudaNativeFrame(const NativeLaunchFrame& f, std::string_view kernel);

}  // namespace strata::backends::gpu
