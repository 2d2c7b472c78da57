/* Native debuggee of the VS Code attach cases, as until_told.py: started plainly, it works round
   after round until the file --until names exists, then prints its tag, its rounds and their
   total (a total that only a run that went on after the debugger left can get right). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long work(long i, long total) {
  total += i * 3; /* work line */
  return total;
}

int main(int argc, char **argv) {
  const char *until = "stop", *tag = "c";
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!strcmp(argv[a], "--until")) until = argv[a + 1];
    if (!strcmp(argv[a], "--tag")) tag = argv[a + 1];
  }
  long rounds = 0, total = 0;
  printf("%s: ready\n", tag);
  fflush(stdout);
  while (access(until, F_OK) != 0) {
    total = work(rounds, total);
    rounds += 1;
    usleep(20000);
  }
  printf("%s: finished after %ld rounds, total %ld\n", tag, rounds, total);
  return 0;
}
