// The collector's settings from the environment and from strata_gpu_start's text, and the
// names and sentences of sticky CUDA errors.
#include <doctest/doctest.h>

#include <map>

#include "config.hpp"
#include "sticky_errors.hpp"

using namespace strata::cuda;
using namespace strata::cuda::collector;

namespace {
auto envOf(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("with no variables the collector traces into /tmp") {
  auto c = configFromEnvironment(envOf({}));
  REQUIRE(c.ok());
  CHECK(c->mode == ring::Mode::Trace);
  CHECK(c->dir == "/tmp");
  CHECK(c->ringBytes == 32u << 20);
  CHECK(c->bufferBytes == 4u << 20);
  CHECK(c->bufferTotalBytes == 128u << 20);
  CHECK(c->flushPeriodMs == 100);
  CHECK(c->errors == Config::Errors::Sync);
  CHECK(c->api == Config::Api::Off);
  CHECK_FALSE(c->graphWhole);
}

TEST_CASE("every variable the adapter sets is read") {
  auto c = configFromEnvironment(envOf({{"STRATA_GPU_MODE", "stacks"}, {"STRATA_GPU_DIR", "/run/strata/s1"},
                                        {"STRATA_GPU_SESSION", "s1"}, {"STRATA_GPU_RING_MB", "8"},
                                        {"STRATA_GPU_BUFFER_MB", "64"}, {"STRATA_GPU_FLUSH_MS", "50"},
                                        {"STRATA_GPU_ERRORS", "0"}, {"STRATA_GPU_GRAPHS", "whole"},
                                        {"STRATA_GPU_API", "launches"}}));
  REQUIRE(c.ok());
  CHECK(c->mode == ring::Mode::Stacks);
  CHECK(c->dir == "/run/strata/s1");
  CHECK(c->session == "s1");
  CHECK(c->ringBytes == 8u << 20);
  CHECK(c->bufferTotalBytes == 64u << 20);
  CHECK(c->flushPeriodMs == 50);
  CHECK(c->errors == Config::Errors::Off);
  CHECK(c->api == Config::Api::Launches);
  CHECK(c->graphWhole);
}

TEST_CASE("errors and api take their levels, 1 still meaning the synchronizing calls") {
  auto all = parseConfig("errors=all api=all", Config{});
  REQUIRE(all.ok());
  CHECK(all->errors == Config::Errors::All);
  CHECK(all->api == Config::Api::All);
  auto one = parseConfig("errors=1 api=off", *all);
  REQUIRE(one.ok());
  CHECK(one->errors == Config::Errors::Sync);
  CHECK(one->api == Config::Api::Off);
  auto bad = parseConfig("api=some", Config{});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "api='some': expected off, launches or all");
  auto worse = configFromEnvironment(envOf({{"STRATA_GPU_ERRORS", "yes"}}));
  REQUIRE_FALSE(worse.ok());
  CHECK(worse.error().message == "STRATA_GPU_ERRORS='yes': expected 1 (or sync), all or 0");
}

TEST_CASE("a bad value is refused with the variable, the value and what was expected") {
  auto c = configFromEnvironment(envOf({{"STRATA_GPU_MODE", "full"}}));
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().message == "STRATA_GPU_MODE='full': expected off, trace or stacks");
  auto r = configFromEnvironment(envOf({{"STRATA_GPU_RING_MB", "0"}}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "STRATA_GPU_RING_MB='0': expected a whole number from 1 to 1024");
  auto d = configFromEnvironment(envOf({{"STRATA_GPU_DIR", "relative/dir"}}));
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().message == "STRATA_GPU_DIR='relative/dir': expected an absolute directory");
}

TEST_CASE("strata_gpu_start's text applies over the environment's settings") {
  auto base = configFromEnvironment(envOf({{"STRATA_GPU_DIR", "/from/env"}, {"STRATA_GPU_SESSION", "env"}}));
  REQUIRE(base.ok());
  auto c = parseConfig("mode=stacks; session=late  ring_mb=2", *base);
  REQUIRE(c.ok());
  CHECK(c->mode == ring::Mode::Stacks);
  CHECK(c->session == "late");
  CHECK(c->dir == "/from/env");
  CHECK(c->ringBytes == 2u << 20);
  auto bad = parseConfig("mode=stacks colour=red", *base);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("unknown setting 'colour'") == 0);
  auto noEq = parseConfig("stacks", *base);
  REQUIRE_FALSE(noEq.ok());
  CHECK(noEq.error().message == "setting 'stacks' is not key=value");
}

TEST_CASE("sticky errors are named in the terms of the API that returned them") {
  CHECK(std::string(stickyErrorName(kDomainRuntime, 700)) == "cudaErrorIllegalAddress");
  CHECK(std::string(stickyErrorName(kDomainDriver, 700)) == "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(std::string(stickyErrorName(kDomainRuntime, 710)) == "cudaErrorAssert");
  CHECK(std::string(stickyErrorName(kDomainRuntime, 719)) == "cudaErrorLaunchFailure");
  CHECK(std::string(stickyErrorName(kDomainDriver, 719)) == "CUDA_ERROR_LAUNCH_FAILED");
  CHECK(stickyErrorName(kDomainRuntime, 0) == nullptr);
  CHECK(stickyErrorName(kDomainRuntime, 1) == nullptr);    // invalid value: the call failed, the context lives
  CHECK(stickyErrorName(kDomainRuntime, 2) == nullptr);    // out of memory: same
  CHECK(describeCudaError("cudaDeviceSynchronize", "cudaErrorIllegalAddress", 700, "_Z3oobPi") ==
        "cudaDeviceSynchronize returned cudaErrorIllegalAddress (700): a kernel accessed memory it may not; the CUDA "
        "context can no longer be used; last kernel launched on this thread: _Z3oobPi");
  CHECK(apiDisplayName("cudaLaunchKernel_v7000") == "cudaLaunchKernel");
  CHECK(apiDisplayName("cudaLaunchKernel_ptsz_v7000") == "cudaLaunchKernel_ptsz");
  CHECK(apiDisplayName("cuLaunchKernel") == "cuLaunchKernel");
  CHECK(apiDisplayName("cuMemcpyHtoD_v2") == "cuMemcpyHtoD");
}
