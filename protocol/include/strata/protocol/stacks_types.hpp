// Typed arguments of Strata's custom `parallelStacks` request: the stacks of every thread of
// several processes (the ranks of a distributed job) merged into one tree. The response body
// is JSON built by the stacks reader; its schema is in tests/e2e/schema/strataCustom.json.
#pragma once

#include "strata/protocol/types.hpp"

namespace strata::protocol {

// The processes named one by one, or a launcher's pid (it and every descendant), or both.
struct ParallelStacksArguments {
  std::optional<std::vector<std::int64_t>> processIds;
  std::optional<std::int64_t> processTree;
  std::optional<bool> pythonOnly;  // Python frames only (default: Python and native, merged)
};

void tag_invoke(const json::value_from_tag&, json::value& jv, const ParallelStacksArguments& v);
void tag_invoke(decode_tag, Reader& r, ParallelStacksArguments& v);

}  // namespace strata::protocol
