// The floor of GPU collection overhead: the least a CUPTI client can do to trace kernels, to put
// beside Strata's collector in bench/gpu/collection_overhead.py. Injected like libstrata_cupti.so
// (CUDA_INJECTION64_PATH), it enables CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL only (more kinds
// with STRATA_FLOOR_KINDS), hands CUPTI the same buffers as the collector (4 MiB each, at most
// 128 MiB outstanding, four kept for reuse, flush period 100 ms) and only counts the records:
// no callbacks, no ring, no parsing. What remains is what CUPTI's kernel tracing itself costs.
// At exit it prints one line to stderr: "strata-cupti-floor: N kernels, D dropped", or the
// first CUPTI call that failed, with CUPTI's result.
#include <cupti.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

// The collector's defaults (backends/cuda/collector/config.hpp, collector.cpp): the floor must
// differ from Strata only in what is enabled and done with the records.
constexpr std::size_t kBufferBytes = 4u << 20;
constexpr std::size_t kBufferTotalBytes = 128u << 20;
constexpr std::size_t kBuffersKept = 4;
constexpr std::uint32_t kFlushPeriodMs = 100;

struct Kind {
  const char* word;  // as STRATA_FLOOR_KINDS spells it
  CUpti_ActivityKind kind;
  const char* name;
};
constexpr Kind kKinds[] = {
    {"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {"memset", CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {"runtime", CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {"driver", CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
};

std::atomic<std::uint64_t> g_kernels{0};
std::atomic<std::uint64_t> g_dropped{0};
std::atomic<std::size_t> g_outstanding{0};
std::mutex g_buffersMutex;
std::vector<std::uint8_t*>* g_freeBuffers = nullptr;  // never destroyed: buffers may complete during exit

// The first failure wins: the line at exit names it. Written once (g_failedOnce), read at exit.
std::atomic<bool> g_failedOnce{false};
char g_failure[512] = {};
pid_t g_pid = 0;
bool g_started = false;

void fail(const char* call, CUptiResult r) {
  if (g_failedOnce.exchange(true)) return;
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI result";
  std::snprintf(g_failure, sizeof g_failure, "%s failed: %s (%d)", call, text, static_cast<int>(r));
}

void CUPTIAPI onBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxRecords) {
  *buffer = nullptr;
  *size = 0;
  *maxRecords = 0;
  // Beyond the bound CUPTI gets no buffer and drops records (counted below), as in the collector.
  if (g_outstanding.load(std::memory_order_relaxed) + kBufferBytes > kBufferTotalBytes) return;
  std::uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_buffersMutex);
    if (!g_freeBuffers->empty()) {
      b = g_freeBuffers->back();
      g_freeBuffers->pop_back();
    }
  }
  if (!b) b = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  if (!b) return;
  g_outstanding.fetch_add(kBufferBytes, std::memory_order_relaxed);
  *buffer = b;
  *size = kBufferBytes;
}

void CUPTIAPI onBufferCompleted(CUcontext context, std::uint32_t streamId, std::uint8_t* buffer, std::size_t size,
                                std::size_t validSize) {
  if (buffer && validSize) {
    std::uint64_t kernels = 0;
    CUpti_Activity* record = nullptr;
    for (;;) {
      const CUptiResult r = cuptiActivityGetNextRecord(buffer, validSize, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the buffer's end
      if (r != CUPTI_SUCCESS) {
        fail("cuptiActivityGetNextRecord", r);
        break;
      }
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
    }
    g_kernels.fetch_add(kernels, std::memory_order_relaxed);
  }
  std::size_t dropped = 0;
  if (const CUptiResult r = cuptiActivityGetNumDroppedRecords(context, streamId, &dropped); r != CUPTI_SUCCESS)
    fail("cuptiActivityGetNumDroppedRecords", r);
  else
    g_dropped.fetch_add(dropped, std::memory_order_relaxed);
  if (!buffer) return;
  const std::size_t had = g_outstanding.load(std::memory_order_relaxed);
  g_outstanding.fetch_sub(had < size ? had : size, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_buffersMutex);
  if (size == kBufferBytes && g_freeBuffers->size() < kBuffersKept) g_freeBuffers->push_back(buffer);
  else std::free(buffer);
}

void atExit() {
  // A forked child inherits this handler but not CUPTI's tracing: the parent reports.
  if (getpid() != g_pid) return;
  if (g_started && !g_failedOnce.load()) {
    if (const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
      fail("cuptiActivityFlushAll", r);
  }
  if (g_failedOnce.load()) {
    std::fprintf(stderr, "strata-cupti-floor: %s\n", g_failure);
  } else {
    std::fprintf(stderr, "strata-cupti-floor: %llu kernels, %llu dropped\n",
                 static_cast<unsigned long long>(g_kernels.load()), static_cast<unsigned long long>(g_dropped.load()));
  }
  std::fflush(stderr);
}

// STRATA_FLOOR_KINDS: "kernel" (the default) or kinds joined by '+', kernel among them, e.g.
// "kernel+memcpy+memset+sync". False, with the reason in g_failure, for anything else.
bool kindsFromEnvironment(std::vector<const Kind*>& out) {
  const char* env = std::getenv("STRATA_FLOOR_KINDS");
  const std::string text = env && *env ? env : "kernel";
  std::size_t at = 0;
  bool kernel = false;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('+', at), text.size());
    const std::string word = text.substr(at, end - at);
    const Kind* found = nullptr;
    for (const Kind& k : kKinds)
      if (word == k.word) found = &k;
    if (!found) {
      g_failedOnce = true;
      std::snprintf(g_failure, sizeof g_failure,
                    "STRATA_FLOOR_KINDS=%s: '%s' is not a kind (kernel, memcpy, memset, sync, runtime, driver, "
                    "joined by '+', kernel among them)",
                    text.c_str(), word.c_str());
      return false;
    }
    kernel = kernel || found->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    out.push_back(found);
    at = end + 1;
  }
  if (!kernel) {
    g_failedOnce = true;
    std::snprintf(g_failure, sizeof g_failure, "STRATA_FLOOR_KINDS=%s: kernel must be among the kinds", text.c_str());
    return false;
  }
  return true;
}

}  // namespace

// Called by the CUDA driver inside cuInit. Always 1: a failure must not take the program's CUDA
// with it; it is reported at exit instead.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  // Once per process. Not std::call_once: should a CUPTI call below initialize the driver, which
  // calls this again on the same thread, call_once would deadlock; the second call returns.
  static std::atomic<bool> entered{false};
  if (entered.exchange(true)) return 1;
  [] {
    g_pid = getpid();
    g_freeBuffers = new std::vector<std::uint8_t*>();
    if (std::atexit(atExit) != 0) {
      std::fprintf(stderr, "strata-cupti-floor: atexit failed: no line will be printed at exit; nothing enabled\n");
      return;
    }
    std::vector<const Kind*> kinds;
    if (!kindsFromEnvironment(kinds)) return;
    if (const CUptiResult r = cuptiActivityRegisterCallbacks(&onBufferRequested, &onBufferCompleted);
        r != CUPTI_SUCCESS)
      return fail("cuptiActivityRegisterCallbacks", r);
    if (const CUptiResult r = cuptiActivityFlushPeriod(kFlushPeriodMs); r != CUPTI_SUCCESS)
      return fail("cuptiActivityFlushPeriod", r);
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      if (const CUptiResult r = cuptiActivityEnable(kinds[i]->kind); r != CUPTI_SUCCESS) {
        char call[64];
        std::snprintf(call, sizeof call, "cuptiActivityEnable(%s)", kinds[i]->name);
        fail(call, r);
        // Half a floor would time less than it claims: what was enabled goes off again (a
        // failure here changes nothing, the first one is what the line at exit reports).
        for (std::size_t j = 0; j < i; ++j) (void)cuptiActivityDisable(kinds[j]->kind);
        return;
      }
    }
    g_started = true;
  }();
  return 1;
}
