// Debuggee: dies of the fault named by argv[1]: "fpe" (integer division by zero) or "abort".
#include <stdlib.h>
#include <string.h>

volatile int zero = 0;

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "fpe") == 0) return 10 / zero;  // @bp:fpe
  abort();  // @bp:abort
}
