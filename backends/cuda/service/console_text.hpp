// The Debug Console's !gpu and !sql commands over a GPU store, answered as readable text; the
// formatters are shared with anything else that prints the store's results to a person.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "strata/cuda/store.hpp"

namespace strata::cuda::text {

std::string duration(std::uint64_t ns);  // "850 ns", "12.3 µs", "4.56 ms", "1.23 s"
std::string bytes(std::uint64_t n);      // "512 B", "1.50 MiB"

std::string summary(const Summary& s);
std::string timeline(const Timeline& t);
std::string record(const RecordDetail& d);
std::string table(const SqlResult& r);

// What the GPU was doing when process `pid` crashed, from what its collector had delivered:
// the last kernels launched on each of its streams (with the line that launched each, and
// when each ended, before `stopNs`: when the debugger reported the stop), and the last CUDA
// calls of thread `tid`. Empty when
// the store holds nothing of the process. Bounded: a few rows per stream and thread.
Result<std::string> crashContext(Store& store, std::uint32_t pid, std::uint32_t tid, std::uint64_t stopNs);

// One command line without its '!' ("gpu top 5", "gpu kernel gemm", "gpu timeline",
// "sql SELECT ..."); gpu start|stop are not answered here (no store knows about collection).
Result<std::string> run(Store& store, std::string_view line);

}  // namespace strata::cuda::text
