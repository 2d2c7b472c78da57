/* Example native program: prints the primes below N (argv[1]) with a running count. */
#include <stdio.h>
#include <stdlib.h>

static int is_prime(int n) {
  if (n < 2) return 0;
  for (int d = 2; d * d <= n; ++d)
    if (n % d == 0) return 0;
  return 1;
}

int main(int argc, char** argv) {
  int limit = argc > 1 ? atoi(argv[1]) : 20;
  int count = 0;
  for (int n = 2; n < limit; ++n) {
    if (is_prime(n)) {
      ++count;
      printf("prime #%d: %d\n", count, n);
    }
  }
  fprintf(stderr, "%d primes below %d\n", count, limit);
  return 0;
}
