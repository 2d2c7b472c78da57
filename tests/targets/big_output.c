/* Writes N megabytes of numbered lines to stdout: the client can check every byte arrived
 * in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  long megabytes = argc > 1 ? atol(argv[1]) : 100;
  long total = megabytes * 1024 * 1024, written = 0, line = 0;
  static char buf[1 << 16];
  size_t used = 0;
  while (written < total) {
    char one[64];
    /* 32 bytes per line, so N MB is a whole number of lines */
    int n = snprintf(one, sizeof one, "%010ld abcdefghijklmnopqrst\n", line++);
    if (used + (size_t)n > sizeof buf) {
      fwrite(buf, 1, used, stdout);
      used = 0;
    }
    memcpy(buf + used, one, (size_t)n);
    used += (size_t)n;
    written += n;
  }
  fwrite(buf, 1, used, stdout);
  fflush(stdout);
  fprintf(stderr, "done %ld lines\n", line);
  return 0;
}
