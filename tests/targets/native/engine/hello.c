// Debuggee: a plain C program with a function called in a loop and a recursive one; exits 7.
#include <stdio.h>

int add(int a, int b) {  // @bp:add
  return a + b;
}

int factorial(int n) {  // @bp:factorial
  if (n <= 1) return 1;
  return n * factorial(n - 1);
}

int main(void) {
  int sum = 0;
  for (int i = 0; i < 5; ++i) sum = add(sum, i);
  printf("sum=%d\n", sum);
  printf("factorial=%d\n", factorial(5));
  fflush(stdout);
  return 7;
}
