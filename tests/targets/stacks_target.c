// A multithreaded program for `strata stacks`: named workers wait in a loop until stdin says quit.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int stop_flag;

static void* spin_worker(void* arg) {
  char name[16];
  snprintf(name, sizeof name, "worker-%ld", (long)arg);
  pthread_setname_np(pthread_self(), name);
  while (!atomic_load(&stop_flag)) {
    usleep(10000);  // @stack:worker_wait
  }
  return NULL;
}

int main(void) {
  pthread_t ids[3];
  for (long i = 0; i < 3; i++) pthread_create(&ids[i], NULL, spin_worker, (void*)i);
  usleep(50000);  // the workers have named themselves
  printf("ready\n");
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin) && strncmp(line, "quit", 4) != 0) {
  }
  atomic_store(&stop_flag, 1);
  for (int i = 0; i < 3; i++) pthread_join(ids[i], NULL);
  printf("finished\n");
  return 0;
}
