// What strata_gpu_dump gathers from a run's rings, and the two ways it prints it (text for
// people, JSON for the GPU check script).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "strata/cuda/collector/reader.hpp"

namespace strata::cuda::dump {

// Source lines of native frames, from the modules' DWARF (libdw, offline).
class LineResolver {
 public:
  LineResolver();
  ~LineResolver();
  struct Where {
    std::string function, file;
    int line = 0;
  };
  // `elfAddress` is a return address in the module's own terms; the call is just before it.
  Where resolve(const std::string& module, std::uint64_t elfAddress, bool returnAddress = true);

 private:
  struct Module;
  std::map<std::string, std::unique_ptr<Module>> modules_;
};

class Report {
 public:
  void add(const Batch& batch, const SessionReader& reader);
  void printText(std::FILE* out, const std::vector<CollectorStatus>& processes, LineResolver& lines) const;
  std::string json(const std::vector<CollectorStatus>& processes, int exitCode, const std::string& dir,
                   LineResolver& lines) const;

 private:
  struct KernelStat {
    std::string name;
    std::uint64_t count = 0, totalNs = 0;
    std::map<std::uint32_t, std::uint64_t> sites;  // site id -> launches
  };
  struct ApiStat {
    std::string name;
    std::uint64_t count = 0, failed = 0;
  };
  std::map<RecordKind, std::uint64_t> counts_;
  std::map<std::uint32_t, KernelStat> kernels_;  // by session string id
  std::map<std::uint32_t, ApiStat> apis_;
  std::map<std::string, std::uint64_t> markers_;
  std::map<std::uint32_t, LaunchSite> sites_;
  std::vector<CudaErrorEvent> errors_;
  std::vector<GraphNodeSite> graphNodes_;
  std::uint64_t copyBytes_ = 0;
  std::uint64_t startNs_ = 0, endNs_ = 0;
  std::uint64_t zeroTimes_ = 0, outOfOrder_ = 0, lastStart_ = 0;
  // Copies and kernels as intervals on their streams, for the overlap count (bounded).
  struct Span {
    std::uint64_t start, end;
    std::uint32_t pid, stream;
  };
  std::vector<Span> copySpans_, kernelSpans_;
  std::uint64_t copiesOverlappingKernels() const;
};

}  // namespace strata::cuda::dump
