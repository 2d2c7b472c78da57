// `strata attach PID`: a debug session on a running process, from a terminal.
#pragma once

namespace strata::cli {

// argv[first..] are the command's arguments. Returns the exit status.
int attachCommand(int argc, char** argv, int first);

}  // namespace strata::cli
