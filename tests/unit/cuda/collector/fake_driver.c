/* Loads the collector named by CUDA_INJECTION64_PATH and calls InitializeInjection, as the CUDA
   driver does inside cuInit: what strata_gpu_dump then reports is the collector's own account
   of starting on this machine. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  const char* path = getenv("CUDA_INJECTION64_PATH");
  if (!path) {
    fprintf(stderr, "CUDA_INJECTION64_PATH is not set\n");
    return 2;
  }
  void* lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return 2;
  }
  int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
  if (!init) {
    fprintf(stderr, "%s has no InitializeInjection\n", path);
    return 2;
  }
  return init() == 1 ? 0 : 1;
}
