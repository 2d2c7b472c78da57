// What the GPU store tests share: a temporary directory, record builders, and writers of the
// traces the tests generate (Kineto JSON, plain and gzip).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "strata/cuda/import.hpp"
#include "strata/cuda/store.hpp"

namespace strata::cuda::test {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/strata-gpu-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::unique_ptr<Store> newStore(const TempDir& dir, const std::string& name = "s.strata") {
  auto s = Store::create(dir.file(name));
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  return std::move(*s);
}

inline GpuRecord kernelRecord(std::uint64_t start, std::uint64_t end, std::uint32_t name, std::uint32_t stream = 7,
                              std::uint32_t device = 0, std::uint32_t correlation = 0) {
  GpuRecord r;
  r.kind = RecordKind::Kernel;
  r.start = start;
  r.end = end;
  r.name = name;
  r.stream = stream;
  r.device = device;
  r.correlation = correlation;
  r.grid[0] = 64;
  r.grid[1] = r.grid[2] = 1;
  r.block[0] = 256;
  r.block[1] = r.block[2] = 1;
  r.registersPerThread = 32;
  return r;
}

inline GpuRecord apiRecord(std::uint64_t start, std::uint64_t end, std::uint32_t name, std::uint32_t pid,
                           std::uint32_t tid, std::uint32_t correlation = 0, RecordKind kind = RecordKind::RuntimeApi) {
  GpuRecord r;
  r.kind = kind;
  r.start = start;
  r.end = end;
  r.name = name;
  r.pid = pid;
  r.tid = tid;
  r.correlation = correlation;
  return r;
}

inline void writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  REQUIRE(f.good());
}

inline void writeGzip(const std::string& path, const std::string& text) {
  gzFile g = gzopen(path.c_str(), "wb");
  REQUIRE(g != nullptr);
  REQUIRE(gzwrite(g, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  REQUIRE(gzclose(g) == Z_OK);
}

inline std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A Kineto trace as torch.profiler writes it: deviceProperties first, traceEvents, then
// baseTimeNanoseconds at the very end. `events` are the traceEvents entries, JSON text each.
inline std::string kinetoTrace(const std::vector<std::string>& events, const std::string& base = "1700000000000000000",
                               bool withDevice = true) {
  std::string s = "{\n  \"schemaVersion\": 1,\n";
  if (withDevice) {
    s += "  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", "
         "\"totalGlobalMem\": 85045379072,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n"
         "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
         "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
         "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 233472,\n"
         "      \"numSms\": 132, \"sharedMemPerBlockOptin\": 232448\n    }\n  ],\n";
  }
  s += "  \"traceEvents\": [\n";
  for (std::size_t i = 0; i < events.size(); ++i) s += "  " + events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  s += "  ],\n  \"traceName\": \"test.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\"";
  if (!base.empty()) s += ",\n  \"baseTimeNanoseconds\": " + base;
  s += "\n}\n";
  return s;
}

}  // namespace strata::cuda::test
