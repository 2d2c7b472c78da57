/* Second CU of a two-CU debuggee. */
#include "multi_shared.h"

int other_unit(int v) {
  return shared_add(v, 2);
}
