// `strata stacks PID`: every thread's stack of a running process, then detach; `--tree` merges
// several processes into one tree (the reading is backends/stacks').
#pragma once

namespace strata::cli {

// argv[first..] are the command's arguments ([--json] PID). Returns the exit status.
int stacksCommand(int argc, char** argv, int first);

// `strata core [--json] CORE [PROGRAM]` (core.cpp): a core file's process and every thread's stack.
int coreCommand(int argc, char** argv, int first);

}  // namespace strata::cli
