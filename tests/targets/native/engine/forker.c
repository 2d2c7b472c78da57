// Debuggee: calls work() before and after forking a child that calls work() too.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x) {  // @bp:work
  return x * 2;
}

int main(void) {
  int before = work(1);
  pid_t child = fork();
  if (child == 0) {
    printf("child work=%d\n", work(10));
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("parent work=%d,%d child exit=%d\n", before, work(2), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
