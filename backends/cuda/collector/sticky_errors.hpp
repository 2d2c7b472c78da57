// Which CUDA results leave a context unusable ("sticky"): the errors the collector turns into
// exception stops. Plain numbers, so this needs no CUDA headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::cuda::collector {

// CUPTI's callback domains for the two APIs.
inline constexpr std::uint32_t kDomainDriver = 1;
inline constexpr std::uint32_t kDomainRuntime = 2;

// The error's name in that API's terms ("cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS"),
// or nullptr when `result` is not sticky.
const char* stickyErrorName(std::uint32_t domain, int result);

// "cudaDeviceSynchronize returned cudaErrorIllegalAddress (700): ...; last kernel launched on
// this thread: vector_add(float*, ...)" — the sentence an exception stop shows.
std::string describeCudaError(std::string_view api, std::string_view error, int result, std::string_view lastKernel);

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's callback names carry the API version.
std::string_view apiDisplayName(std::string_view cuptiName);

}  // namespace strata::cuda::collector
