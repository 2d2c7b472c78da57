// What the ranks of a job need to know of a process from /proc: its rank as it was started,
// and the processes under it (its parent and whether it is a multiprocessing helper:
// python/proxy/peer_check.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::backends::procinfo {

// RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID as the process was started.
std::optional<std::int64_t> environRank(std::int64_t pid);
// Every process under `root` (itself first).
std::vector<std::int64_t> processTree(std::int64_t root);

}  // namespace strata::backends::procinfo
