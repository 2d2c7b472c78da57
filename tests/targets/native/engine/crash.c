// Debuggee: writes through a null pointer (SIGSEGV, address 0x0).
#include <stdio.h>

int* volatile target = 0;

int main(void) {
  puts("about to crash");
  fflush(stdout);
  *target = 1;  // @bp:crash
  return 0;
}
