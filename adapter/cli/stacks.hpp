// `strata stacks PID`: every thread's stack of a running native process, then detach; and the
// stacks of several processes merged into one tree (`--tree`, the `parallelStacks` request).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "strata/result.hpp"

namespace strata::cli {

// argv[first..] are the command's arguments ([--json] PID). Returns the exit status.
int stacksCommand(int argc, char** argv, int first);

// Every thread of every process in `pids` (with `children`, their descendants too), read-only,
// one process at a time, merged into one tree, outermost frames at the top (STAT style):
// `json` is {processes: [{pid, rank?, python?, error?}], threads, tree}, each node a frame with
// its count, owners ("ranks 0-2, pid 812") and threads ("rank R / NAME (tid)"); `text` is the
// same, indented. An error when no process could be read (each one's reason said).
struct ParallelStacks {
  boost::json::object json;
  std::string text;
};
Result<ParallelStacks> parallelStacks(std::vector<pid_t> pids, bool children, bool pythonOnly);

}  // namespace strata::cli
