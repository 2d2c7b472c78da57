// Debuggee for the NativeDebugger tests: one program, one mode per argv[1]; `// @bp:` marks lines.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int global_counter = 7;

int square(int v) {
  int result = v * v;  // @bp:square_body
  return result;
}

int add_squares(int a, int b) {
  int sa = square(a);  // @bp:call_square
  int sb = square(b);  // @bp:after_call
  return sa + sb;
}

int nodebug_twice(int v);

static void nodebug(void) {
  int r = nodebug_twice(21);  // @bp:nodebug_call
  printf("twice=%d\n", r);  // @bp:nodebug_after
}

int shlib_triple(int v);  // shlib.c, a shared library: called through the PLT
int shlib_nine(int v);

static void shlib(void) {
  int r = shlib_triple(7);  // @bp:shlib_call
  r += shlib_triple(1);  // @bp:shlib_again
  printf("shlib=%d\n", r);  // @bp:shlib_after
}

int depth_of(int n) {
  if (n == 0) return 0;  // @bp:recurse_base
  return 1 + depth_of(n - 1);  // @bp:recurse_call
}

static void basic(void) {
  int x = 3;  // @bp:basic_x
  int y = 4;

  // blank lines above and below make the moved-line check possible

  int total = add_squares(x, y);  // @bp:basic_total
  printf("total=%d\n", total);
}

static void loop(void) {
  int sum = 0;
  for (int i = 0; i < 10; i++) {
    sum += i;  // @bp:loop_body
  }
  printf("sum=%d\n", sum);
}

static void crash(void) {
  int victim = 42;
  int* volatile nothing = NULL;
  *nothing = victim;  // @bp:crash_line
}

static void* worker(void* arg) {
  long index = (long)arg;
  int local = (int)index * 10;
  usleep(1000 * (unsigned)index);
  global_counter += local;  // @bp:worker_line
  return NULL;
}

static void threads(void) {
  pthread_t ids[8];
  for (long i = 0; i < 8; i++) pthread_create(&ids[i], NULL, worker, (void*)i);
  for (int i = 0; i < 8; i++) pthread_join(ids[i], NULL);
  printf("threads done\n");
}

static void plugin(const char* path) {
  void* handle = dlopen(path, RTLD_NOW);
  if (!handle) {
    printf("dlopen failed: %s\n", dlerror());
    return;
  }
  int (*fn)(int) = (int (*)(int))dlsym(handle, "plugin_compute");
  printf("plugin=%d\n", fn(5));
}

static void slow(void) {
  for (int i = 0; i < 30; i++) {
    global_counter++;  // @bp:slow_line
    usleep(20000);
  }
  printf("slow done %d\n", global_counter);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "basic";
  if (!strcmp(mode, "basic")) basic();
  else if (!strcmp(mode, "loop")) loop();
  else if (!strcmp(mode, "recurse")) printf("depth=%d\n", depth_of(1000));
  else if (!strcmp(mode, "crash")) crash();
  else if (!strcmp(mode, "threads")) threads();
  else if (!strcmp(mode, "plugin") && argc > 2) plugin(argv[2]);
  else if (!strcmp(mode, "slow")) slow();
  else if (!strcmp(mode, "nodebug")) nodebug();
  else if (!strcmp(mode, "shlib")) shlib();
  else if (!strcmp(mode, "shlib_inner")) printf("nine=%d\n", shlib_nine(2));
  fflush(stdout);
  return 0;
}
