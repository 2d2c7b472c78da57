// Debuggee of the CUDA error stop tests. It loads a CUDA collector with dlopen, as the CUDA
// driver loads libstrata_cupti.so, then makes a sticky CUDA error reach the debugger:
//   cuda_error_stop stop       the real libstrata_cupti.so: a stand-in for the CUDA runtime calls
//                              its strata_gpu_error_stop with a filled StrataGpuError, exactly the
//                              call the collector makes for a sticky error (twice: 700, then 719)
//   cuda_error_stop wait       the same after printing "ready" and reading a line from stdin
//                              (a debugger attaches meanwhile)
//   cuda_error_stop collector  a test build of the collector (the same sources, one more export):
//                              its test entry makes the CUPTI callbacks a kernel launch and a
//                              failing cudaDeviceSynchronize make, so the collector's own code
//                              fills the struct and finds the program's call
//   cuda_error_stop launches   loads the collector CUDA_INJECTION64_PATH names (a launch with
//                              "gpu" sets it; the tests name the test build) and makes four
//                              kernel launches from one C line through its test entry, which
//                              delivers their records as CUPTI would
//   cuda_error_stop crash      the same launches (two of fill, one of reduce), then a write
//                              through a null pointer
// No GPU is needed: nothing here calls CUDA.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata/strata_gpu.h"

static void (*error_stop)(const StrataGpuError*);

// What lies between the program's call and strata_gpu_error_stop in a real run (CUDA's frames
// and the collector's): the debugger must show the program's frame on top, not this one.
__attribute__((noinline)) static int fake_synchronize(int result, const char* error) {
  static char message[512];
  StrataGpuError e;
  memset(&e, 0, sizeof e);
  e.size = sizeof e;
  e.result = result;
  e.domain = 2;  // runtime API
  e.cbid = 165;  // CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020
  e.tid = (uint32_t)gettid();
  e.lastCorrelation = 7;
  e.lastSite = 3;
  e.callerPc = (uint64_t)__builtin_return_address(0);
  e.api = "cudaDeviceSynchronize";
  e.error = error;
  e.lastKernel = "_Z4fillPii";
  snprintf(message, sizeof message,
           "cudaDeviceSynchronize returned %s (%d): a kernel accessed memory it may not; the CUDA context can no "
           "longer be used; last kernel launched on this thread: _Z4fillPii",
           error, result);
  e.message = message;
  error_stop(&e);
  return result;
}

static int through_collector(void) {
  void* lib = dlopen(STRATA_CUPTI_DOUBLE, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fprintf(stderr, "%s\n", dlerror()), 2;
  int (*sticky)(const char*, const char*, int) =
      (int (*)(const char*, const char*, int))dlsym(lib, "strata_gpu_test_sticky_error");
  if (!sticky) return fprintf(stderr, "no strata_gpu_test_sticky_error in %s\n", STRATA_CUPTI_DOUBLE), 2;
  // The collector's ring goes to a folder of our own, removed at the end.
  char dir[] = "/tmp/strata-cuda-error-XXXXXX";
  if (!mkdtemp(dir)) return perror("mkdtemp"), 2;
  char config[128];
  snprintf(config, sizeof config, "mode=trace dir=%s", dir);
  int result = sticky(config, "_Z4fillPii", 700);  // @bp:collector_call
  printf("after the error: %d\n", result);
  char ring[192];
  snprintf(ring, sizeof ring, "%s/strata-gpu-%d.ring", dir, (int)getpid());
  unlink(ring);
  rmdir(dir);
  return 0;
}

typedef int (*test_launches)(const char*, const char*, int);

static test_launches launcher(void) {
  const char* path = getenv("CUDA_INJECTION64_PATH");
  if (!path) return fprintf(stderr, "CUDA_INJECTION64_PATH is not set\n"), NULL;
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fprintf(stderr, "%s\n", dlerror()), NULL;
  test_launches launch = (test_launches)dlsym(lib, "strata_gpu_test_launches");
  if (!launch) fprintf(stderr, "no strata_gpu_test_launches in %s\n", path);
  return launch;
}

static int launches(void) {
  test_launches launch = launcher();
  if (!launch) return 2;
  int made = launch(NULL, "_Z4fillPii", 4);  // @bp:native_launch
  printf("launched %d\n", made);  // @bp:native_after
  return made == 4 ? 0 : 1;
}

// Kernels launched, then a host-side crash: the stop says what the GPU was doing.
static int launch_then_crash(void) {
  test_launches launch = launcher();
  if (!launch) return 2;
  int made = launch(NULL, "_Z4fillPii", 2);  // @bp:crash_launch
  made += launch(NULL, "_Z6reducePfi", 1);  // @bp:crash_reduce
  printf("launched %d, now crashing\n", made);
  volatile int* nowhere = NULL;
  *nowhere = made;  // @bp:crash_line
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "stop";
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(mode, "collector") == 0) return through_collector();  // @bp:collector_main
  if (strcmp(mode, "launches") == 0) return launches();  // @bp:launches_main
  if (strcmp(mode, "crash") == 0) return launch_then_crash();
  void* lib = dlopen(STRATA_CUPTI_SO, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fprintf(stderr, "%s\n", dlerror()), 2;
  error_stop = (void (*)(const StrataGpuError*))dlsym(lib, "strata_gpu_error_stop");
  if (!error_stop) return fprintf(stderr, "no strata_gpu_error_stop in %s\n", STRATA_CUPTI_SO), 2;
  if (strcmp(mode, "wait") == 0) {
    printf("ready\n");
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return 0;
  }
  int first = fake_synchronize(700, "cudaErrorIllegalAddress");  // @bp:first_call
  printf("after the first error: %d\n", first);
  int second = fake_synchronize(719, "cudaErrorLaunchFailure");  // @bp:second_call
  printf("after the second error: %d\n", second);
  return 0;
}
