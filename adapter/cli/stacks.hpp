// `strata stacks PID`: every thread's stack of a running native process, then detach.
#pragma once

namespace strata::cli {

// argv[first..] are the command's arguments ([--json] PID). Returns the exit status.
int stacksCommand(int argc, char** argv, int first);

}  // namespace strata::cli
