/* A small native debuggee: echoes its arguments, cwd and one variable; exits with argv[1]. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  char cwd[4096];
  printf("hello from C\n");
  for (int i = 1; i < argc; ++i) printf("arg[%d]=%s\n", i, argv[i]);
  printf("cwd=%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
  const char* v = getenv("STRATA_TEST_VAR");
  printf("STRATA_TEST_VAR=%s\n", v ? v : "(unset)");
  printf("utf8=\xc3\xa9\xe2\x9c\x93 invalid=\xff\xfe end\n");
  fflush(stdout);
  fprintf(stderr, "to stderr\n");
  return argc > 1 ? atoi(argv[1]) : 0; /* @bp:exit */
}
