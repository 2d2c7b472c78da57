// Debuggee for the native fault tests: real SIGBUS, SIGILL and SIGFPE raised by the CPU and the
// kernel, not by kill(). `native_faults bus` touches a mapped page past the end of a shrunk file,
// `ill` executes ud2, `fpe` divides by zero; the SIGSEGVs: `write` stores through a null
// struct pointer, `readonly` writes into a string constant, `call` calls a function pointer to
// nowhere (`callgp`: to no address at all), `canonical` reads through a pointer no x86-64 address can be (a general protection
// fault). Each prints what it is about to do first.
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

struct shard {
  long id;
  long count;
};

static int segv_fault(const char* how) {
  printf("segv: %s\n", how);
  fflush(stdout);
  if (!strcmp(how, "write")) {
    struct shard* volatile s = NULL;
    s->count = 3;  // @bp:write_line
  } else if (!strcmp(how, "readonly")) {
    char* volatile text = (char*)"constant";
    text[2] = 'X';  // @bp:readonly_line
  } else if (!strcmp(how, "call")) {
    int (*volatile fn)(int) = (int (*)(int))(uintptr_t)0xdead0000ull;
    return fn(1);  // @bp:call_line
  } else if (!strcmp(how, "callgp")) {
    int (*volatile fn)(int) = (int (*)(int))(uintptr_t)0xdead00000000ull;
    return fn(2);  // @bp:callgp_line
  } else if (!strcmp(how, "canonical")) {
    volatile long* volatile p = (volatile long*)(uintptr_t)0xdead000000000010ull;
    return (int)*p;  // @bp:canonical_line
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "bus")) return bus_fault();  // @bp:bus_call
  if (!strcmp(mode, "ill")) return ill_fault(7);  // @bp:ill_call
  if (!strcmp(mode, "fpe")) return fpe_fault(12);  // @bp:fpe_call
  if (!strcmp(mode, "write") || !strcmp(mode, "readonly") || !strcmp(mode, "call") || !strcmp(mode, "callgp") || !strcmp(mode, "canonical"))
    return segv_fault(mode);  // @bp:segv_call
  fprintf(stderr, "usage: native_faults bus|ill|fpe|write|readonly|call|callgp|canonical\n");
  return 2;
}
