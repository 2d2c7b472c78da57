// Debuggee: handles SIGUSR1 it sends itself, three times; prints what its handler saw.
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t seen = 0;

static void on_usr1(int sig) {
  (void)sig;
  seen++;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  for (int i = 0; i < 3; ++i) raise(SIGUSR1);  // @bp:raise
  printf("handled SIGUSR1 %d times\n", (int)seen);
  return seen == 3 ? 0 : 1;
}
