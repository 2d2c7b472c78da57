// What the ranks of a job need to know of a process from /proc: its parent, command line,
// rank as it was started, and the processes under it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::backends::procinfo {

std::int64_t parentOf(std::int64_t pid);
// /proc/PID/cmdline with its NULs as spaces.
std::string commandLine(std::int64_t pid);
// multiprocessing's own helper processes (resource_tracker, forkserver): nobody debugs them.
bool multiprocessingHelper(const std::string& cmdline);
// RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID as the process was started.
std::optional<std::int64_t> environRank(std::int64_t pid);
// Every process under `root` (itself first).
std::vector<std::int64_t> processTree(std::int64_t root);

}  // namespace strata::backends::procinfo
