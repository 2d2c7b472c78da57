// The collector's launch-key path, timed on the CPU inside a CPython (no GPU needed): what
// `stacks` adds to each launch before CUPTI's own work. Loaded by launch_keys.py with ctypes.
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

#include "launch_sites.hpp"

using namespace strata::cuda::collector;

namespace {

struct Bench {
  PythonFrames python;
  NativeStack native;
  Scopes scopes;
  SiteTable table{python, native, scopes};
  Bench() { native.skipModules({}, reinterpret_cast<const void*>(&marker)); }
  static void marker() {}
};

Bench& bench() {
  static Bench* b = new Bench();
  return *b;
}

std::uint64_t now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

// ns per call of one way of keying a launch, n times from the calling thread.
double timeKeys(int mode, int n) {
  Bench& b = bench();
  std::uint64_t pcs[kSiteNativeFrames];
  b.table.lookup(211, 2, "cudaLaunchKernel", 0x1234);  // the first one makes the site
  std::vector<RawSite*> raw;
  b.table.takePending(raw);
  b.table.release(raw);
  const std::uint64_t t0 = now();
  for (int i = 0; i < n; ++i) {
    if (mode == 3) b.native.capture(pcs, kSiteNativeFrames, 1);  // the whole native stack, every launch
    else b.table.lookup(211, 2, "cudaLaunchKernel", 0x1234);
  }
  return double(now() - t0) / n;
}

struct ThreadRun {
  int mode, n;
  double ns;
};

}  // namespace

// mode 0: the calling thread's own Python frames (key: code and position, no unwinding);
// 1: a thread with no Python frame and no scope (key: a bounded native unwind);
// 2: a thread with no Python frame while the calling thread waits in a scope (key: the scope);
// 3: an unwind of the whole native stack each launch (the collector's way before, for every
//    launch made without the GIL). 1 and 2 run on a thread started here; 0 and 3 on the caller.
extern "C" __attribute__((visibility("default"))) double strata_bench_keys(int mode, int n) {
  if (mode == 0 || mode == 3) return timeKeys(mode, n);
  ThreadRun run{mode, n, 0};
  int slot = -1;
  if (mode == 2) slot = bench().scopes.enter(bench().python, 1, 0);
  pthread_t t;
  pthread_create(
      &t, nullptr,
      [](void* arg) -> void* {
        auto* r = static_cast<ThreadRun*>(arg);
        r->ns = timeKeys(r->mode, r->n);
        return nullptr;
      },
      &run);
  pthread_join(t, nullptr);
  if (slot >= 0) bench().scopes.leave(slot);
  return run.ns;
}

extern "C" __attribute__((visibility("default"))) int strata_bench_frames_read() {
  RawPythonFrame frames[kSitePythonFrames];
  return bench().python.top(frames, kSitePythonFrames);
}
