// Debuggee: dlopens the library named by argv[1] and calls plugin_compute(1); prints 42.
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* handle = dlopen(argv[1], RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  int (*compute)(int) = (int (*)(int))dlsym(handle, "plugin_compute");
  if (!compute) return 4;
  printf("plugin=%d\n", compute(1));
  fflush(stdout);
  dlclose(handle);
  return 0;
}
