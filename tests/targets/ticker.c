/* Runs until killed: appends a tick to the file named by argv[1] every 50 ms and prints one,
 * so a test can see that it keeps running (and writing) after the debugger leaves. */
#include <stdio.h>
#include <signal.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long n = 0;
  for (;;) {
    if (argc > 1) {
      FILE* f = fopen(argv[1], "a");
      if (f) {
        fprintf(f, "tick %ld\n", n);
        fclose(f);
      }
    }
    printf("tick %ld\n", n++);
    fflush(stdout);
    usleep(50000);
  }
}
