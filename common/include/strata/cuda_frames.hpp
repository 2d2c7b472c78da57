// Which native frames belong to CUDA rather than to the program: the runtime linked into the
// program (nvcc links cudart statically by default, so cudaDeviceSynchronize is the program's
// own symbol), the kernels' host stubs and CUDA's headers. One test for the native debugger's
// CUDA error stop and the GPU views' launch frames.
#pragma once

#include <string_view>

namespace strata::cuda_frames {

// "vector_add(float const*, ...)", "void foo<int>(int*)" -> "vector_add", "foo<int>".
inline std::string_view baseName(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  if (auto paren = name.find('('); paren != std::string_view::npos) name = name.substr(0, paren);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  return name;
}

// A function of the CUDA runtime (cudaLaunchKernel, cudart::..., __cudaRegisterFunction) or a
// kernel's host stub (__device_stub__...), by its name.
inline bool isRuntimeFunction(std::string_view name) {
  if (name.size() > 4 && name.substr(0, 4) == "cuda" && name[4] >= 'A' && name[4] <= 'Z') return true;
  return name.substr(0, 6) == "__cuda" || name.substr(0, 8) == "cudart::" || name.substr(0, 5) == "_cuda" ||
         name.substr(0, 7) == "_cudart" || name.find("__device_stub__") != std::string_view::npos;
}

// A line of CUDA's own headers (the cudaLaunchKernel<T> template of cuda_runtime.h).
inline bool isCudaHeader(std::string_view file) {
  const auto slash = file.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? file : file.substr(slash + 1);
  return base.substr(0, 12) == "cuda_runtime" || file.find("/cuda/include/") != std::string_view::npos ||
         (file.find("/cuda-") != std::string_view::npos && file.find("/include/") != std::string_view::npos);
}

}  // namespace strata::cuda_frames
