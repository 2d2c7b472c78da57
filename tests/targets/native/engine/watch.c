// Debuggee: writes a watched global once; prints its value.
#include <stdio.h>

volatile long watched = 5;
volatile long other = 0;

void change(void) {
  other = 1;
  watched = 42;  // @bp:watched_write
  other = 2;
}

int main(void) {
  long before = watched;
  change();
  printf("watched=%ld before=%ld\n", watched, before);
  return 0;
}
