// Debuggee for attach: prints "ready" once argv[1] extra threads run, then loops until
// keep_running is cleared (by a debugger).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile int keep_running = 1;
volatile unsigned long magic = 0x5354524154410001ul;
volatile unsigned long loops = 0;
static volatile int started = 0;

__attribute__((noinline)) void spin_once(void) {  // @bp:spin_once
  __atomic_fetch_add(&loops, 1, __ATOMIC_RELAXED);
  usleep(1000);
}

static void* worker(void* arg) {
  (void)arg;
  __atomic_fetch_add(&started, 1, __ATOMIC_RELAXED);
  while (keep_running) spin_once();
  return NULL;
}

int main(int argc, char** argv) {
  int extra = argc > 1 ? atoi(argv[1]) : 0;
  pthread_t threads[16];
  if (extra > 16) extra = 16;
  for (int i = 0; i < extra; ++i) pthread_create(&threads[i], NULL, worker, NULL);
  while (__atomic_load_n(&started, __ATOMIC_RELAXED) < extra) usleep(100);
  printf("ready\n");
  fflush(stdout);
  while (keep_running) spin_once();
  for (int i = 0; i < extra; ++i) pthread_join(threads[i], NULL);
  printf("spin done\n");
  return 0;
}
