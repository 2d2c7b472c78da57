// The library's exported entry points (strata_gpu.h) over the one Collector of the process.
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "collector.hpp"

#define STRATA_EXPORT extern "C" __attribute__((visibility("default")))

namespace strata::cuda::collector {

// Never destroyed: the atexit handler and forked children must not race its destructor.
Collector& processCollector() {
  static Collector* c = new Collector();
  return *c;
}

}  // namespace strata::cuda::collector

namespace {

using strata::cuda::collector::Collector;

Collector& collector() { return strata::cuda::collector::processCollector(); }

void installProcessHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] { collector().onExit(); });
    pthread_atfork(nullptr, nullptr, [] { collector().onForkChild(); });
  });
}

// Without a ring there is no status for the adapter to read: stderr is the one place left.
void sayWithoutRing(const std::string& why) {
  if (!collector().ring().isOpen())
    std::fprintf(stderr, "strata: no GPU collection in process %d: %s\n", static_cast<int>(getpid()), why.c_str());
}

}  // namespace

STRATA_EXPORT int InitializeInjection(void) {
  try {
    installProcessHooks();
    auto config = strata::cuda::collector::configFromEnvironment([](const char* name) { return std::getenv(name); });
    if (!config) {
      sayWithoutRing(config.error().message);
      return 1;
    }
    if (auto started = collector().start(*config); !started) sayWithoutRing(started.error().message);
  } catch (...) {
  }
  // The driver is told success either way: a failure must not stop the program's CUDA.
  return 1;
}

STRATA_EXPORT int strata_gpu_start(const char* text) {
  try {
    installProcessHooks();
    auto config = strata::cuda::collector::configFromEnvironment([](const char* name) { return std::getenv(name); });
    if (config && text) config = strata::cuda::collector::parseConfig(text, *config);
    if (!config) {
      sayWithoutRing(config.error().message);
      return -2;
    }
    auto started = collector().start(*config);
    if (!started) {
      sayWithoutRing(started.error().message);
      return -1;
    }
    return 0;
  } catch (...) {
    return -3;
  }
}

STRATA_EXPORT int strata_gpu_stop(void) {
  try {
    return collector().stop() ? 0 : -1;
  } catch (...) {
    return -3;
  }
}

STRATA_EXPORT int strata_gpu_flush(void) {
  try {
    return collector().flush() ? 0 : -1;
  } catch (...) {
    return -3;
  }
}

STRATA_EXPORT int strata_gpu_status(char* buffer, size_t size) {
  try {
    return std::snprintf(buffer, size, "%s", collector().statusLine().c_str());
  } catch (...) {
    return -3;
  }
}

STRATA_EXPORT int strata_gpu_push_external_id(uint64_t id) { return collector().pushExternalId(id) ? 0 : -1; }

STRATA_EXPORT int strata_gpu_pop_external_id(void) { return collector().popExternalId() ? 0 : -1; }

STRATA_EXPORT int strata_gpu_set_error_hook(StrataGpuErrorHook hook, void* user) {
  collector().setErrorHook(hook, user);
  return 0;
}

STRATA_EXPORT int strata_gpu_scope_enter(int kind, int skip) {
  try {
    return collector().scopeEnter(kind, skip);
  } catch (...) {
    return -1;
  }
}

STRATA_EXPORT void strata_gpu_scope_leave(int slot) { collector().scopeLeave(slot); }

STRATA_EXPORT void strata_gpu_python_hooked(int installed) { collector().pythonHooked(installed != 0); }
