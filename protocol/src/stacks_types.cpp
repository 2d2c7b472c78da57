// Field list of the parallelStacks request's arguments (stacks_types.hpp).
#include "strata/protocol/stacks_types.hpp"

#include "codec.hpp"

namespace strata::protocol {

STRATA_CODEC(ParallelStacksArguments,
  v.field("processIds", t.processIds, false);
  v.field("processTree", t.processTree, false);
  v.field("pythonOnly", t.pythonOnly, false);)

}  // namespace strata::protocol
