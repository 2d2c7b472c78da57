// Stacks read from outside a running process, the one reader `strata stacks`, the parallelStacks
// request and (next) core files share: every thread's native stack and, in a CPython process,
// its Python frames from memory, merged; and several processes merged into one tree.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "strata/result.hpp"

namespace strata::stacks {

struct Options {
  bool nativeOnly = false;
  bool pythonOnly = false;
  bool full = false;  // interpreter frames shown one by one, not folded
  bool locals = false;
  bool readRank = false;  // the rank the process gives itself (its libc environ), as "environRank"
  std::size_t maxFrames = 200;  // listed per thread
  std::optional<int> layoutMinor;  // read CPython's structures as 3.N's, whatever the process says
};

// Attaches to one process read-only, reads every thread, detaches (a process stopped by a signal
// stays in its group stop). Fills `out` ({pid, python?, threads: [{id, name, frames}]}) and `text`.
Result<void> inspectProcess(pid_t pid, const Options& o, boost::json::object& out, std::string& text);

// The process's descendants, children first; and `pids` with every descendant of each added.
std::vector<pid_t> descendants(pid_t root);
std::vector<pid_t> withDescendants(std::vector<pid_t> pids);

// Every thread of every process in `pids` (with `children`, their descendants too), read-only,
// one process at a time, merged into one tree, outermost frames at the top (STAT style):
// `json` is {processes: [{pid, rank?, python?, error?}], threads, tree}, each node a frame with
// its count, owners ("ranks 0-2, pid 812") and threads ("rank R / NAME (tid)"); `text` is the
// same, indented. An error when no process could be read (each one's reason said), or when
// `cancelled` (asked between processes) says to stop.
struct ParallelStacks {
  boost::json::object json;
  std::string text;
};
Result<ParallelStacks> parallelStacks(std::vector<pid_t> pids, bool children, bool pythonOnly,
                                      const std::function<bool()>& cancelled = {});

}  // namespace strata::stacks
