// Debuggee for the native fault tests: real SIGBUS, SIGILL and SIGFPE raised by the CPU and the
// kernel, not by kill(). `native_faults bus` touches a mapped page past the end of a shrunk file,
// `ill` executes ud2, `fpe` divides by zero. Each prints what it is about to do first.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int bus_fault(void) {
  long page = sysconf(_SC_PAGESIZE);
  int fd = memfd_create("strata-bus", 0);
  if (fd < 0 || ftruncate(fd, 2 * page) != 0) return perror("memfd"), 2;
  volatile char* mapped = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return perror("mmap"), 2;
  mapped[0] = 1;
  // The mapping stays two pages long; the file behind its second page is gone.
  if (ftruncate(fd, page) != 0) return perror("ftruncate"), 2;
  volatile char* past = mapped + page;
  printf("touching %p\n", (void*)past);
  fflush(stdout);
  *past = 42;  // @bp:bus_line
  return 0;
}

static int ill_fault(int code) {
  printf("executing ud2 with code %d\n", code);
  fflush(stdout);
  __asm__ volatile("ud2");  // @bp:ill_line
  return code;
}

static int fpe_fault(int dividend) {
  volatile int divisor = 0;
  printf("dividing %d by zero\n", dividend);
  fflush(stdout);
  int quotient = dividend / divisor;  // @bp:fpe_line
  return quotient;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "bus")) return bus_fault();  // @bp:bus_call
  if (!strcmp(mode, "ill")) return ill_fault(7);  // @bp:ill_call
  if (!strcmp(mode, "fpe")) return fpe_fault(12);  // @bp:fpe_call
  fprintf(stderr, "usage: native_faults bus|ill|fpe\n");
  return 2;
}
