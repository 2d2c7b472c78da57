// The collector's decisions and callbacks: the version gate, standing aside for another CUPTI
// client, what a start says on this machine, launch sites joined to kernels by correlation id
// through the real callback handler, and sticky CUDA errors turned into one stop.
#include <cupti.h>
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <chrono>
#include <cstring>
#include <thread>

#include "collector.hpp"
#include "support.hpp"

using namespace strata::cuda;
using namespace strata::cuda::collector;
using namespace strata::cuda::test;

namespace {

// What the real CUPTI says to a subscription here: CUPTI_SUCCESS only where a GPU and its
// driver are present.
CUptiResult realSubscription() {
  static CUptiResult result = [] {
    CUpti_SubscriberHandle h = nullptr;
    CUptiResult r = cuptiSubscribe_v2(&h, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr, nullptr);
    if (r == CUPTI_SUCCESS) cuptiUnsubscribe(h);
    return r;
  }();
  return result;
}

Config configIn(const ScratchDir& dir, ring::Mode mode) {
  Config c;
  c.dir = dir.path();
  c.session = "t";
  c.mode = mode;
  return c;
}

CollectorStatus onlyStatus(const ScratchDir& dir) {
  SessionReader reader(dir.path(), "t");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  auto procs = reader.processes();
  REQUIRE(procs.size() == 1);
  return procs[0];
}

// Runs `body` on a thread of its own: the collector's per-thread launch state starts fresh.
template <class F>
void onFreshThread(F body) {
  std::thread t(body);
  t.join();
}

struct Api {
  Collector& c;
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  std::uint32_t correlation;
  const char* symbol = nullptr;
  int result = 0;
  void enter() { call(CUPTI_API_ENTER); }
  void exit() { call(CUPTI_API_EXIT); }
  void call(CUpti_ApiCallbackSite site) {
    CUpti_CallbackData cb{};
    cb.callbackSite = site;
    cb.functionName = "?";
    cb.symbolName = symbol;
    cb.correlationId = correlation;
    cb.functionReturnValue = &result;
    c.onCallback(domain, cbid, &cb);
  }
};

}  // namespace

// Exported (-rdynamic) so the frames of the launches they make are named.
extern "C" __attribute__((noinline)) void strata_test_launch_from_a(Collector& c, std::uint32_t correlation) {
  Api launch{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, correlation, "_Z1kv"};
  launch.enter();
  launch.exit();
}
extern "C" __attribute__((noinline)) void strata_test_launch_from_b(Collector& c, std::uint32_t correlation) {
  Api launch{c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, correlation, "triton_kernel"};
  launch.enter();
  launch.exit();
}

TEST_CASE("the version gate passes the library built against and refuses any other, naming both") {
  uint32_t version = 0;
  REQUIRE(cuptiGetVersion(&version) == CUPTI_SUCCESS);
  CHECK_FALSE(versionRefusal(version, CUPTI_API_VERSION).has_value());
  auto refusal = versionRefusal(120000, 130001);
  REQUIRE(refusal.has_value());
  CHECK(refusal->find("version 120000") != std::string::npos);
  CHECK(refusal->find("built for CUPTI version 130001") != std::string::npos);

  ScratchDir dir;
  CuptiOps ops;
  ops.getVersion = [](uint32_t* v) {
    *v = 120000;
    return CUPTI_SUCCESS;
  };
  Collector c(ops);
  auto started = c.start(configIn(dir, ring::Mode::Trace));
  REQUIRE_FALSE(started.ok());
  auto s = onlyStatus(dir);
  CHECK(s.state == ring::State::Refused);
  CHECK(s.text == *refusal);
  CHECK(s.cuptiVersion == 120000);
  CHECK(s.builtCuptiVersion == 130001);
}

TEST_CASE("a CUPTI held by another client is named, and Strata stands aside") {
  SUBCASE("the decision, with CUPTI's own result text") {
    auto d = decideSubscribe(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "CUPTI for torch.profiler", 77);
    CHECK(d.outcome == SubscribeDecision::StandAside);
    CHECK(d.state == ring::State::StoodAside);
    CHECK(d.text ==
          "CUPTI is held by CUPTI for torch.profiler: CUDA 13.0 allows one CUPTI client per process, so Strata stands "
          "aside and collects no GPU activity in process 77 (cuptiSubscribe_v2: "
          "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39))");
    auto unnamed = decideSubscribe(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "", 77);
    CHECK(unnamed.text.find("CUPTI is held by another CUPTI client (a profiler such as torch.profiler") == 0);
    auto ok = decideSubscribe(CUPTI_SUCCESS, nullptr, 77);
    CHECK(ok.outcome == SubscribeDecision::Proceed);
    auto broken = decideSubscribe(CUPTI_ERROR_UNKNOWN, nullptr, 77);
    CHECK(broken.outcome == SubscribeDecision::Fail);
    CHECK(broken.text == "cuptiSubscribe_v2 failed: CUPTI_ERROR_UNKNOWN (999) (is there a GPU and a working CUDA driver?)");
  }
  SUBCASE("the collector's start takes that path end to end and stays quiet afterwards") {
    ScratchDir dir;
    CuptiOps ops;
    ops.subscribe = [](CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams* p) {
      std::snprintf(p->oldSubscriberName, p->oldSubscriberSize, "CUPTI for Nsight Systems");
      return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    };
    Collector c(ops);
    auto started = c.start(configIn(dir, ring::Mode::Stacks));
    REQUIRE_FALSE(started.ok());
    CHECK(started.error().message.find("CUPTI is held by CUPTI for Nsight Systems") == 0);
    auto s = onlyStatus(dir);
    CHECK(s.state == ring::State::StoodAside);
    CHECK(s.text == started.error().message);
    CHECK(c.statusLine() == "stood-aside: " + started.error().message);
    // Callbacks that still arrive do nothing.
    strata_test_launch_from_a(c, 1);
    CHECK(c.sites().count() == 0);
    CHECK_FALSE(c.stop().ok());
  }
}

TEST_CASE("a start on this machine either collects or says which CUPTI call failed and why") {
  ScratchDir dir;
  Collector c;
  auto started = c.start(configIn(dir, ring::Mode::Trace));
  auto s = onlyStatus(dir);
  CHECK(s.cuptiVersion == CUPTI_API_VERSION);
  if (realSubscription() == CUPTI_SUCCESS) {
    CHECK(started.ok());
    CHECK(s.state == ring::State::Collecting);
    CHECK(c.stop().ok());
  } else {
    REQUIRE_FALSE(started.ok());
    CHECK(s.state == ring::State::Failed);
    CHECK(s.text == "cuptiSubscribe_v2 failed: " + resultName(realSubscription()) +
                        " (is there a GPU and a working CUDA driver?)");
  }
}

TEST_CASE("a failure after subscribing undoes the subscription and names the call") {
  if (realSubscription() == CUPTI_SUCCESS) {
    reportSkip("a failure after subscribing undoes the subscription and names the call",
               "a GPU is present: CUPTI enables the activities, so this failure cannot be produced here");
    return;
  }
  ScratchDir dir;
  static int unsubscribed = 0;
  unsubscribed = 0;
  CuptiOps ops;
  ops.subscribe = [](CUpti_SubscriberHandle* h, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) {
    *h = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
    return CUPTI_SUCCESS;
  };
  ops.unsubscribe = [](CUpti_SubscriberHandle h) {
    CHECK(h == reinterpret_cast<CUpti_SubscriberHandle>(0x1));
    ++unsubscribed;
    return CUPTI_SUCCESS;
  };
  {
    Collector c(ops);
    auto started = c.start(configIn(dir, ring::Mode::Stacks));
    REQUIRE_FALSE(started.ok());
    CHECK(started.error().message ==
          "cuptiActivityEnable(CONCURRENT_KERNEL) failed: CUPTI_ERROR_UNKNOWN (999) (is there a GPU and a working CUDA "
          "driver?)");
    CHECK(unsubscribed == 1);
    CHECK(onlyStatus(dir).state == ring::State::Failed);
  }
  CHECK(unsubscribed == 1);  // not twice
}

TEST_CASE("mode off loads, says so, and touches nothing") {
  ScratchDir dir;
  CuptiOps ops;
  ops.getVersion = [](uint32_t*) {
    FAIL("CUPTI was asked in mode off");
    return CUPTI_ERROR_UNKNOWN;
  };
  Collector c(ops);
  REQUIRE(c.start(configIn(dir, ring::Mode::Off)).ok());
  auto s = onlyStatus(dir);
  CHECK(s.state == ring::State::Off);
  CHECK(s.text == "mode off: nothing is collected");
}

TEST_CASE("kernels join the site of the launch that made them, by correlation id") {
  ScratchDir dir;
  Collector c;
  REQUIRE(c.runWithoutCupti(configIn(dir, ring::Mode::Stacks)).ok());
  onFreshThread([&] {
    // The same stack twice (one call site in a loop the optimizer cannot peel), then another
    // function.
    volatile std::uint32_t times = 2;
    for (std::uint32_t corr = 1; corr <= times; ++corr) strata_test_launch_from_a(c, corr);
    strata_test_launch_from_b(c, 3);
    // A driver launch made inside a runtime launch is the same launch: no second site.
    Api outer{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 4, "_Z1kv"};
    Api inner{c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 5, "_Z1kv"};
    outer.enter();
    inner.enter();
    inner.exit();
    outer.exit();
  });
  CHECK(c.sites().count() == 3);

  // The records CUPTI would deliver later: the kernels and the runtime call of the first.
  std::vector<std::uint8_t> bytes;
  auto add = [&](auto record) {
    const std::size_t at = bytes.size();
    bytes.resize(at + sizeof record);
    std::memcpy(bytes.data() + at, &record, sizeof record);
  };
  for (std::uint32_t corr : {1u, 2u, 3u, 4u}) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = corr;
    k.start = 100 * corr;
    k.end = 100 * corr + 50;
    k.name = corr == 3 ? "triton_kernel" : "_Z1kv";
    add(k);
  }
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  api.correlationId = 1;
  add(api);
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0, maxRecords = 0;
  c.onBufferRequested(&buffer, &size, &maxRecords);
  REQUIRE(buffer);
  std::memcpy(buffer, bytes.data(), bytes.size());
  c.onBufferCompleted(nullptr, 0, buffer, size, bytes.size());

  SessionReader reader(dir.path(), "t");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  REQUIRE(b.sites.size() == 3);
  REQUIRE(b.records.size() == 5);
  const auto& k1 = b.records[0];
  const auto& k2 = b.records[1];
  const auto& k3 = b.records[2];
  const auto& k4 = b.records[3];
  CHECK(k1.site != 0);
  CHECK(k1.site == k2.site);
  CHECK(k3.site != 0);
  CHECK(k3.site != k1.site);
  CHECK(k4.site != 0);
  CHECK(b.records[4].site == k1.site);  // the API record of the same launch
  const LaunchSite* a = reader.site(k1.site);
  const LaunchSite* t = reader.site(k3.site);
  REQUIRE(a);
  REQUIRE(t);
  CHECK(a->api == "cudaLaunchKernel");
  CHECK(t->api == "cuLaunchKernel");
  CHECK(a->pid == static_cast<std::uint32_t>(getpid()));
  CHECK(a->python.empty());  // no Python in this process
  // The innermost kept frame is inside the function that made the launch (the frames between
  // it and the handler are the test's own helper and the collector's code, not skipped in a
  // test binary): it is among the first few, named by its exported symbol.
  auto has = [](const LaunchSite* s, const std::string& symbol) {
    for (std::size_t i = 0; i < std::min<std::size_t>(s->nativeFrames.size(), 8); ++i)
      if (s->nativeFrames[i].symbol == symbol) return true;
    return false;
  };
  CHECK(has(a, "strata_test_launch_from_a"));
  CHECK(has(t, "strata_test_launch_from_b"));
  CHECK(onlyStatus(dir).unjoinedLaunches == 0);
}

namespace {
struct HookCalls {
  int count = 0;
  StrataGpuError copy{};
  std::string api, error, lastKernel, message;
};
void recordHook(const StrataGpuError* e, void* user) {
  auto* calls = static_cast<HookCalls*>(user);
  ++calls->count;
  calls->copy = *e;
  calls->api = e->api;
  calls->error = e->error;
  calls->lastKernel = e->lastKernel;
  calls->message = e->message;
}
}  // namespace

TEST_CASE("a sticky error at an API's exit stops once, named by the call the program made") {
  ScratchDir dir;
  Collector c;
  REQUIRE(c.runWithoutCupti(configIn(dir, ring::Mode::Trace)).ok());
  HookCalls calls;
  c.setErrorHook(&recordHook, &calls);
  onFreshThread([&] {
    Api launch{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 7, "_Z3oobPi"};
    launch.enter();
    launch.exit();
    // A non-sticky failure is the program's business.
    Api bad{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 8, nullptr, 1};
    bad.enter();
    bad.exit();
    CHECK(calls.count == 0);
    // cudaDeviceSynchronize fails with 700; the driver call inside it saw it first.
    Api sync{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 9, nullptr, 700};
    Api inner{c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 10, nullptr, 700};
    sync.enter();
    inner.enter();
    inner.exit();
    CHECK(calls.count == 0);  // not yet: the runtime call reports it
    sync.exit();
    CHECK(calls.count == 1);
    // Every later call repeats the error: counted, not stopped on again.
    sync.enter();
    sync.exit();
  });
  CHECK(calls.count == 1);
  CHECK(calls.api == "cudaDeviceSynchronize");
  CHECK(calls.error == "cudaErrorIllegalAddress");
  CHECK(calls.copy.result == 700);
  CHECK(calls.copy.domain == CUPTI_CB_DOMAIN_RUNTIME_API);
  CHECK(calls.copy.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
  CHECK(calls.copy.size == sizeof(StrataGpuError));
  CHECK(calls.lastKernel == "_Z3oobPi");
  CHECK(calls.copy.lastCorrelation == 7);
  CHECK(calls.copy.tid != 0);
  CHECK(calls.copy.callerPc != 0);
  CHECK(calls.message ==
        "cudaDeviceSynchronize returned cudaErrorIllegalAddress (700): a kernel accessed memory it may not; the CUDA "
        "context can no longer be used; last kernel launched on this thread: _Z3oobPi");

  SessionReader reader(dir.path(), "t");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  REQUIRE(b.errors.size() == 1);
  CHECK(b.errors[0].api == "cudaDeviceSynchronize");
  CHECK(b.errors[0].error == "cudaErrorIllegalAddress");
  CHECK(b.errors[0].lastKernel == "_Z3oobPi");
  CHECK(b.errors[0].lastCorrelation == 7);
  CHECK(b.errors[0].tid == calls.copy.tid);
  CHECK(b.errors[0].callerPc == calls.copy.callerPc);
  CHECK(b.errors[0].callerModule.find("strata_cupti_tests") != std::string::npos);
  CHECK(reader.processes()[0].cudaErrors == 2);
}

TEST_CASE("a sticky error from a driver call the program made itself is named in driver terms") {
  ScratchDir dir;
  Collector c;
  REQUIRE(c.runWithoutCupti(configIn(dir, ring::Mode::Trace)).ok());
  HookCalls calls;
  c.setErrorHook(&recordHook, &calls);
  onFreshThread([&] {
    Api copy{c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, 3, nullptr, 719};
    copy.enter();
    copy.exit();
  });
  CHECK(calls.count == 1);
  CHECK(calls.api == "cuMemcpyDtoH");
  CHECK(calls.error == "CUDA_ERROR_LAUNCH_FAILED");
  CHECK(calls.lastKernel.empty());
  CHECK(calls.message.find("cuMemcpyDtoH returned CUDA_ERROR_LAUNCH_FAILED (719)") == 0);
}

TEST_CASE("with error stops off, failing calls pass untouched") {
  ScratchDir dir;
  Collector c;
  Config config = configIn(dir, ring::Mode::Trace);
  config.errors = Config::Errors::Off;
  REQUIRE(c.runWithoutCupti(config).ok());
  HookCalls calls;
  c.setErrorHook(&recordHook, &calls);
  onFreshThread([&] {
    Api sync{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 9, nullptr, 710};
    sync.enter();
    sync.exit();
  });
  CHECK(calls.count == 0);
  CHECK(onlyStatus(dir).cudaErrors == 0);
}

TEST_CASE("stop when nothing runs says so") {
  Collector c;
  auto stopped = c.stop();
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.error().message == "GPU collection is not running (not started)");
}

// The built library itself, loaded the way the driver loads it. A suite of its own (a ctest
// entry of its own): its CUPTI state must not meet the tests above in one process.
TEST_CASE("libstrata_cupti.so exports its entry points and reports through its ring" * doctest::test_suite("library")) {
  void* lib = dlopen(STRATA_CUPTI_SO, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(lib, dlerror());
  for (const char* name : {"InitializeInjection", "strata_gpu_start", "strata_gpu_stop", "strata_gpu_flush",
                           "strata_gpu_status", "strata_gpu_push_external_id", "strata_gpu_pop_external_id",
                           "strata_gpu_set_error_hook", "strata_gpu_error_stop", "strata_gpu_scope_enter",
                           "strata_gpu_scope_leave", "strata_gpu_python_hooked"})
    CHECK_MESSAGE(dlsym(lib, name) != nullptr, name);
  // Nothing else leaks out of it (its static parts and the C++ runtime's inline code are hidden).
  CHECK(dlsym(lib, "_ZN6strata4cuda9collector9Collector5startERKNS1_6ConfigE") == nullptr);

  ScratchDir dir;
  setenv("STRATA_GPU_DIR", dir.path().c_str(), 1);
  setenv("STRATA_GPU_MODE", "stacks", 1);
  setenv("STRATA_GPU_SESSION", "t", 1);
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
  CHECK(init() == 1);
  auto s = onlyStatus(dir);
  CHECK(s.mode == ring::Mode::Stacks);
  auto status = reinterpret_cast<int (*)(char*, size_t)>(dlsym(lib, "strata_gpu_status"));
  char line[600];
  status(line, sizeof line);
  CHECK(std::string(line) == std::string(ring::stateName(s.state)) + ": " + s.text);
  auto start = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "strata_gpu_start"));
  auto stop = reinterpret_cast<int (*)()>(dlsym(lib, "strata_gpu_stop"));
  if (realSubscription() == CUPTI_SUCCESS) {
    CHECK(s.state == ring::State::Collecting);
    CHECK(start("mode=trace") == -1);  // already collecting
    CHECK(stop() == 0);
  } else {
    CHECK(s.state == ring::State::Failed);
    CHECK(s.text.find("CUPTI_ERROR_UNKNOWN") != std::string::npos);
    CHECK(start("mode=bogus") == -2);
    CHECK(stop() == -1);
  }
  unsetenv("STRATA_GPU_DIR");
  unsetenv("STRATA_GPU_MODE");
  unsetenv("STRATA_GPU_SESSION");
}

// cuptiFinalize resets CUPTI for the whole process: a suite (and a ctest entry) of its own.
TEST_CASE("stop flushes and detaches, CUPTI is finalized at the next API exit, once" * doctest::test_suite("lifecycle")) {
  ScratchDir dir;
  Collector c;
  REQUIRE(c.runWithoutCupti(configIn(dir, ring::Mode::Stacks)).ok());
  SessionReader reader(dir.path(), "t");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  // The collector's flush thread answers a flush request through the ring.
  CHECK(reader.flush(std::chrono::milliseconds(5000)));
  CHECK(reader.processes()[0].heartbeatNs != 0);
  onFreshThread([&] { strata_test_launch_from_a(c, 1); });
  CHECK(c.sites().count() == 1);

  REQUIRE(c.stop().ok());
  auto s = onlyStatus(dir);
  CHECK(s.state == ring::State::Stopped);
  CHECK(s.text.find("stopped; CUPTI is released at the next CUDA call") == 0);
  CHECK_FALSE(c.stop().ok());
  onFreshThread([&] {
    // Launches after the stop leave nothing behind; the first API exit finalizes CUPTI.
    strata_test_launch_from_b(c, 2);
    CHECK(c.sites().count() == 1);
    Api call{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 3, nullptr, 0};
    call.exit();
  });
  s = onlyStatus(dir);
  CHECK(s.state == ring::State::Stopped);
  const std::string afterFinalize = s.text;
  CHECK((afterFinalize == "stopped; CUPTI released" || afterFinalize.find("stopped; cuptiFinalize failed: ") == 0));
  onFreshThread([&] {
    Api call{c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 4, nullptr, 700};
    call.exit();
  });
  CHECK(onlyStatus(dir).text == afterFinalize);  // finalized once; a stopped collector ignores errors too
  CHECK(onlyStatus(dir).cudaErrors == 0);
}
