// Profile requests and their answers through a real ring: the reader's request taken once by the
// producer (a newer one replaces it, a half-written one waits), the settings that ask at start,
// and a KernelMetrics message with its strings read back in the session's terms.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <unistd.h>

#include "config.hpp"
#include "publisher.hpp"
#include "ring_writer.hpp"
#include "support.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;
using ring::RingWriter;

TEST_CASE("a profile request written by the reader is taken once by the collector, the newest one") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "s", 1 << 20, ring::Mode::Trace).ok());
  auto files = dir.files();
  REQUIRE(files.size() == 1);
  auto r = RingReader::open(files[0]);
  REQUIRE(r.ok());
  std::string kernel;
  std::uint32_t count = 0, seq = 0;
  CHECK_FALSE(w.takeProfileRequest(kernel, count, seq));  // none yet

  const std::uint32_t first = (*r)->requestProfile("vector_add", 2);
  CHECK(first % 2 == 0);
  REQUIRE(w.takeProfileRequest(kernel, count, seq));
  CHECK(kernel == "vector_add");
  CHECK(count == 2);
  CHECK(seq == first);
  CHECK_FALSE(w.takeProfileRequest(kernel, count, seq));  // taken

  // Two before the collector looks: only the second counts.
  (*r)->requestProfile("relu", 1);
  const std::uint32_t third = (*r)->requestProfile(std::string(400, 'k'), 64);
  REQUIRE(w.takeProfileRequest(kernel, count, seq));
  CHECK(kernel == std::string(ring::kProfileKernelSize - 1, 'k'));  // cut to the field
  CHECK(count == 64);
  CHECK(seq == third);

  // A request the reader is halfway through writing (odd sequence) is not taken.
  std::atomic_ref<std::uint32_t>(w.header()->profileSeq).fetch_add(1);
  CHECK_FALSE(w.takeProfileRequest(kernel, count, seq));
  // A reader that died there leaves it odd: the next request still goes through.
  const std::uint32_t fourth = (*r)->requestProfile("gemm", 3);
  CHECK(fourth % 2 == 0);
  REQUIRE(w.takeProfileRequest(kernel, count, seq));
  CHECK(kernel == "gemm");
}

TEST_CASE("a session reader asks every ring, and rings that appear later, for the standing request") {
  ScratchDir dir;
  RingWriter a;
  REQUIRE(a.create(dir.path(), "s", 1 << 20, ring::Mode::Trace).ok());
  SessionReader reader(dir.path(), "s");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  CHECK(reader.requestProfile("add", 4) == 1);
  std::string kernel;
  std::uint32_t count = 0, seq = 0;
  REQUIRE(a.takeProfileRequest(kernel, count, seq));
  CHECK(kernel == "add");
  CHECK(count == 4);

  // A ring that appears later (named as an exec'd image's would be: both are this pid's).
  RingWriter b2;
  REQUIRE(b2.create(dir.path(), "s", 1 << 20, ring::Mode::Trace).ok());
  CHECK_FALSE(b2.takeProfileRequest(kernel, count, seq));  // not opened by the reader yet
  REQUIRE(reader.poll(b).ok());
  REQUIRE(b2.takeProfileRequest(kernel, count, seq));
  CHECK(kernel == "add");
  CHECK(count == 4);
}

TEST_CASE("measured metrics and a failure cross the ring with their kernel and sentence") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "s", 1 << 20, ring::Mode::Trace).ok());
  collector::Publisher p(w, static_cast<std::uint32_t>(getpid()), nullptr);
  collector::KernelMetricsInfo ok;
  ok.correlation = 41;
  ok.device = 1;
  ok.request = 6;
  ok.remaining = 1;
  ok.passes = 8;
  ok.kernel = "_Z10vector_addPKfS0_Pfi";
  ok.time = 123;
  ok.smThroughputPct = 12.5;
  ok.dramThroughputPct = 87.25;
  ok.achievedOccupancyPct = 61.0;
  ok.durationNs = 4096;
  p.addKernelMetrics(ok);
  collector::KernelMetricsInfo failed;
  failed.correlation = 42;
  failed.kernel = ok.kernel;
  failed.error = "no hardware metrics in process 1: denied; tracing goes on";
  failed.result = 35;
  p.addKernelMetrics(failed);
  REQUIRE(p.flushPending());

  SessionReader reader(dir.path(), "s");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  REQUIRE(b.metrics.size() == 2);
  const KernelMetricsEvent& e = b.metrics[0];
  const KernelMetrics& m = e.metrics;
  CHECK(m.pid == static_cast<std::uint32_t>(getpid()));
  CHECK(m.correlation == 41);
  CHECK(m.device == 1);
  CHECK(m.request == 6);
  CHECK(e.remaining == 1);
  CHECK(m.passes == 8);
  CHECK(m.kernel == "_Z10vector_addPKfS0_Pfi");
  CHECK(m.error.empty());
  CHECK(m.result == 0);
  CHECK(m.smThroughputPct == 12.5);
  CHECK(m.dramThroughputPct == 87.25);
  CHECK(m.achievedOccupancyPct == 61.0);
  CHECK(m.durationNs == 4096);
  const KernelMetrics& f = b.metrics[1].metrics;
  CHECK(f.correlation == 42);
  CHECK(f.kernel == m.kernel);
  CHECK(f.error == failed.error);
  CHECK(f.result == 35);
  CHECK_FALSE(f.smThroughputPct);
  CHECK_FALSE(f.durationNs);
}

TEST_CASE("STRATA_GPU_PROFILE names a kernel and a count; bad values are refused with what was expected") {
  auto env = [](const char* value) {
    return collector::configFromEnvironment([value](const char* name) -> const char* {
      return std::string(name) == "STRATA_GPU_PROFILE" ? value : nullptr;
    });
  };
  auto c = env("vector_add:2");
  REQUIRE(c.ok());
  CHECK(c->profileKernel == "vector_add");
  CHECK(c->profileCount == 2);
  c = env("ns::relu");  // a qualified name: no count, one launch
  REQUIRE(c.ok());
  CHECK(c->profileKernel == "ns::relu");
  CHECK(c->profileCount == 1);
  c = env("ns::relu:64");
  REQUIRE(c.ok());
  CHECK(c->profileKernel == "ns::relu");
  CHECK(c->profileCount == 64);
  CHECK(collector::configFromEnvironment([](const char*) -> const char* { return nullptr; })->profileCount == 0);
  for (const char* bad : {"add:0", "add:65", ":3", ""}) {
    auto r = env(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == strata::errors::kGpuSetting);
    CHECK(r.error().message.find("STRATA_GPU_PROFILE='" + std::string(bad) + "': expected") == 0);
  }
  auto late = collector::parseConfig("mode=stacks profile=gemm:3", {});
  REQUIRE(late.ok());
  CHECK(late->profileKernel == "gemm");
  CHECK(late->profileCount == 3);
}
