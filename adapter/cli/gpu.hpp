// `strata gpu ...`: run a program with GPU collection into a store, and query a store or any
// trace the importers read (Kineto JSON, Nsight Systems SQLite).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "strata/cuda/store.hpp"
#include "strata/result.hpp"

namespace strata::cli {

// argv[first..] are the arguments after `gpu`. Returns the exit status.
int gpuCommand(int argc, char** argv, int first);

// `strata gpu run`, in gpu_run.cpp. `args` are what follows `run`.
int gpuRun(const std::vector<std::string>& args);

// The text forms shared by `gpu top` and the summary `gpu run` prints.
void printSummary(std::FILE* out, const cuda::Summary& s);
std::string formatNs(std::uint64_t ns);

}  // namespace strata::cli
