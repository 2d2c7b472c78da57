/* A static inline function in a header: each CU that uses it gets its own copy. */
#pragma once

static inline int shared_add(int a, int b) {
  return a + b; /* @line:shared */
}

int other_unit(int v);
