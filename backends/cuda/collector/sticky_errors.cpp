// The sticky CUDA errors and how an exception stop words them.
#include "sticky_errors.hpp"

namespace strata::cuda::collector {
namespace {

struct Sticky {
  int code;
  const char* runtime;
  const char* driver;
  const char* meaning;
};

// The same numbers in both APIs (driver_types.h, cuda.h of CUDA 13.0).
constexpr Sticky kSticky[] = {
    {700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS", "a kernel accessed memory it may not"},
    {702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT", "a kernel ran past the watchdog's limit"},
    {710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "a device-side assert failed"},
    {714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR", "a kernel corrupted its call stack"},
    {715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "a kernel executed an illegal instruction"},
    {716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS", "a kernel accessed a misaligned address"},
    {717, "cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "a kernel accessed an address outside the space its instruction allows"},
    {718, "cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", "a kernel's program counter became invalid"},
    {719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED", "a kernel failed while running"},
};

const Sticky* find(int result) {
  for (const auto& s : kSticky)
    if (s.code == result) return &s;
  return nullptr;
}

}  // namespace

const char* stickyErrorName(std::uint32_t domain, int result) {
  const Sticky* s = find(result);
  if (!s) return nullptr;
  return domain == kDomainDriver ? s->driver : s->runtime;
}

std::string describeCudaError(std::string_view api, std::string_view error, int result, std::string_view lastKernel) {
  std::string text = std::string(api) + " returned " + std::string(error) + " (" + std::to_string(result) + ")";
  if (const Sticky* s = find(result)) text += ": " + std::string(s->meaning) + "; the CUDA context can no longer be used";
  if (!lastKernel.empty()) text += "; last kernel launched on this thread: " + std::string(lastKernel);
  return text;
}

std::string_view apiDisplayName(std::string_view name) {
  // Strip one trailing "_v<digits>".
  auto pos = name.rfind("_v");
  if (pos == std::string_view::npos || pos + 2 >= name.size()) return name;
  for (std::size_t i = pos + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, pos);
}

}  // namespace strata::cuda::collector
