// Helper for the refused-attach tests: a process to attach to (`wait`), one that is not
// dumpable (`undumpable`), or a tracer holding another process (`trace PID`). Each prints
// "ready" once set up and lives until its stdin closes.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "wait";
  if (!strcmp(mode, "undumpable") && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    perror("prctl");
    return 2;
  }
  if (!strcmp(mode, "trace")) {
    pid_t pid = argc > 2 ? (pid_t)atoi(argv[2]) : 0;
    if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) != 0) {
      fprintf(stderr, "PTRACE_SEIZE %d: %s\n", (int)pid, strerror(errno));
      return 2;
    }
  }
  printf("ready\n");
  fflush(stdout);
  char buf[64];
  while (read(0, buf, sizeof buf) > 0) {
  }
  return 0;
}
