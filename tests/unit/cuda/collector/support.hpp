// Helpers the collector tests share: a scratch directory per test, a sink that keeps every
// message a ring hands out, and synthetic records.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "strata/cuda/collector/reader.hpp"

namespace strata::cuda::test {

// A fresh directory, removed with its files when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/strata-gpu-test-XXXXXX";
    path_ = mkdtemp(tmpl) ? tmpl : "";
  }
  ~ScratchDir() {
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) unlink((path_ + "/" + e->d_name).c_str());
      closedir(d);
    }
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') out.push_back(path_ + "/" + e->d_name);
      closedir(d);
    }
    return out;
  }

 private:
  std::string path_;
};

// Keeps every message with the producer's ids.
struct KeepAll : RingSink {
  std::vector<GpuRecord> records;
  std::vector<std::pair<std::uint32_t, std::string>> strings;
  std::vector<ring::SiteMessage> sites;
  std::vector<std::vector<ring::PythonFrameWire>> sitePython;
  std::vector<std::vector<ring::NativeFrameWire>> siteNative;
  std::vector<ring::CudaErrorMessage> errors;
  std::vector<std::vector<ring::CallerWire>> errorCallers;
  std::vector<ring::ObjectNameMessage> names;
  std::vector<char> order;  // 'r', 's', 'S', 'e', 'n' in arrival order

  void onRecord(const GpuRecord& r) override {
    records.push_back(r);
    order.push_back('r');
  }
  void onString(std::uint32_t id, std::string_view t) override {
    strings.emplace_back(id, std::string(t));
    order.push_back('s');
  }
  void onSite(const ring::SiteMessage& m, std::span<const ring::PythonFrameWire> py,
              std::span<const ring::NativeFrameWire> nat) override {
    sites.push_back(m);
    sitePython.emplace_back(py.begin(), py.end());
    siteNative.emplace_back(nat.begin(), nat.end());
    order.push_back('S');
  }
  void onCudaError(const ring::CudaErrorMessage& e, std::span<const ring::CallerWire> c) override {
    errors.push_back(e);
    errorCallers.emplace_back(c.begin(), c.end());
    order.push_back('e');
  }
  void onObjectName(const ring::ObjectNameMessage& n) override {
    names.push_back(n);
    order.push_back('n');
  }
};

inline GpuRecord kernelRecord(std::uint32_t correlation, std::uint64_t start = 1000, std::uint64_t end = 2000) {
  GpuRecord r;
  r.kind = RecordKind::Kernel;
  r.correlation = correlation;
  r.start = start;
  r.end = end;
  r.device = 0;
  r.stream = 7;
  return r;
}

// A case that cannot be checked on this machine says so in the run's summary (scripts/
// test_summary.py reads the line), rather than counting as a check that passed.
inline void reportSkip(const char* testCase, const std::string& reason) {
  std::printf("STRATA-SKIP %s: %s\n", testCase, reason.c_str());
  std::fflush(stdout);
}

// Whether this machine has an NVIDIA driver loaded (a GPU machine).
inline bool nvidiaDriverLoaded() { return access("/proc/driver/nvidia/version", F_OK) == 0; }

}  // namespace strata::cuda::test
