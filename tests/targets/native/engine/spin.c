// Debuggee for attach: prints "ready", then loops until keep_running is cleared (by a debugger).
#include <stdio.h>
#include <unistd.h>

volatile int keep_running = 1;
volatile unsigned long magic = 0x5354524154410001ul;
volatile unsigned long loops = 0;

__attribute__((noinline)) void spin_once(void) {  // @bp:spin_once
  loops++;
  usleep(1000);
}

int main(void) {
  printf("ready\n");
  fflush(stdout);
  while (keep_running) spin_once();
  printf("spin done\n");
  return 0;
}
