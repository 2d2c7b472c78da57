/* First CU of a two-CU debuggee; both CUs use the header's static inline function. */
#include "multi_shared.h"

int main(int argc, char** argv) {
  (void)argv;
  return shared_add(argc, other_unit(argc)) > 0 ? 0 : 1;
}
