// GPU store benchmarks: ingestion rate (records/s), import of a trace file, and gpuTimeline
// latency and item counts at every zoom level from the whole span down to 1 µs. See README.md.
//   strata_bench_gpu ingest   --store PATH [--records N] [--streams S] [--threads T]
//   strata_bench_gpu import   --store PATH --trace FILE
//   strata_bench_gpu timeline --store PATH [--max-items M] [--positions P] [--repeat R]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "strata/cuda/import.hpp"
#include "strata/cuda/store.hpp"

using namespace strata::cuda;
using Clock = std::chrono::steady_clock;

namespace {

std::map<std::string, std::string> parseArgs(int argc, char** argv) {
  std::map<std::string, std::string> a;
  for (int i = 2; i + 1 < argc; i += 2) a[argv[i]] = argv[i + 1];
  return a;
}

long peakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "strata_bench_gpu: %s\n", msg.c_str());
  std::exit(1);
}

// A launch-bound training loop as CUPTI reports it: per launch a runtime call on one of the
// CPU threads and a kernel on one of the streams, a copy every 16 launches; delivered in
// buffers of 4096 records, GPU and CPU records interleaved as they complete.
int ingest(std::map<std::string, std::string>& a) {
  std::string path = a["--store"];
  std::uint64_t n = std::strtoull(a.count("--records") ? a["--records"].c_str() : "10000000", nullptr, 10);
  unsigned streams = static_cast<unsigned>(std::atoi(a.count("--streams") ? a["--streams"].c_str() : "4"));
  unsigned threads = static_cast<unsigned>(std::atoi(a.count("--threads") ? a["--threads"].c_str() : "2"));
  if (path.empty()) die("ingest needs --store PATH");
  std::filesystem::remove(path);
  auto s = Store::create(path);
  if (!s) die(s.error().message);
  Store& store = **s;
  std::vector<std::uint32_t> kernels, apis;
  for (int i = 0; i < 64; ++i) {
    std::string n = "kernel_" + std::to_string(i);  // mangled like nvcc's: kernel_i(float*, float*, int)
    kernels.push_back(store.internName("_Z" + std::to_string(n.size()) + n + "PfS_i"));
  }
  apis.push_back(store.internName("cudaLaunchKernel"));
  apis.push_back(store.internName("cudaMemcpyAsync"));
  std::uint32_t copyName = store.internName("Memcpy HtoD (Pinned -> Device)");
  std::vector<GpuRecord> batch;
  batch.reserve(4096);
  std::uint64_t t = 1'700'000'000'000'000'000ull, produced = 0, correlation = 0;
  std::vector<std::uint64_t> streamFree(streams, t);
  Clock::duration inStore{};
  std::uint64_t rng = 88172645463325252ull;
  auto next = [&] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  auto t0 = Clock::now();
  while (produced < n) {
    ++correlation;
    std::uint32_t tid = 1000 + static_cast<std::uint32_t>(correlation % threads);
    std::uint64_t apiDur = 2000 + next() % 3000;
    bool copy = correlation % 16 == 0;
    GpuRecord api;
    api.kind = RecordKind::RuntimeApi;
    api.pid = 999;
    api.tid = tid;
    api.name = apis[copy];
    api.correlation = static_cast<std::uint32_t>(correlation);
    api.start = t;
    api.end = t + apiDur;
    GpuRecord g;
    unsigned stream = static_cast<unsigned>(correlation % streams);
    g.kind = copy ? RecordKind::Memcpy : RecordKind::Kernel;
    g.pid = 999;
    g.device = 0;
    g.stream = 7 + stream;
    g.correlation = static_cast<std::uint32_t>(correlation);
    g.name = copy ? copyName : kernels[next() % kernels.size()];
    g.start = std::max(t + apiDur / 2, streamFree[stream]) + 1000;
    g.end = g.start + 3000 + next() % 40000;
    streamFree[stream] = g.end;
    if (copy) {
      g.copyKind = 1;
      g.bytes = 1 << 20;
    } else {
      g.grid[0] = 1024, g.grid[1] = g.grid[2] = 1;
      g.block[0] = 256, g.block[1] = g.block[2] = 1;
      g.registersPerThread = 64;
    }
    batch.push_back(api);
    batch.push_back(g);
    produced += 2;
    t += apiDur + 500;
    if (batch.size() >= 4096 || produced >= n) {
      auto a0 = Clock::now();
      if (auto r = store.ingest(batch); !r) die(r.error().message);
      inStore += Clock::now() - a0;
      batch.clear();
    }
  }
  auto f0 = Clock::now();
  if (auto r = store.flush(); !r) die(r.error().message);
  inStore += Clock::now() - f0;
  double total = seconds(Clock::now() - t0);
  if (auto r = store.close(); !r) die(r.error().message);
  auto bytes = std::filesystem::file_size(path);
  std::printf("ingest: %llu records in %.3f s in the store (%.3f s with generation): %.2f M records/s; "
              "file %.1f MiB (%.1f B/record); peak RSS %.1f MiB\n",
              static_cast<unsigned long long>(produced), seconds(inStore), total, produced / seconds(inStore) / 1e6,
              bytes / 1048576.0, static_cast<double>(bytes) / static_cast<double>(produced), peakRssKb() / 1024.0);
  return 0;
}

int import(std::map<std::string, std::string>& a) {
  std::string path = a["--store"], trace = a["--trace"];
  if (path.empty() || trace.empty()) die("import needs --store PATH --trace FILE");
  std::filesystem::remove(path);
  auto t0 = Clock::now();
  auto opened = openTrace(trace, path);
  if (!opened) die(opened.error().message);
  if (auto r = opened->store->close(); !r) die(r.error().message);
  double s = seconds(Clock::now() - t0);
  std::printf("import: %s: %llu events, %llu records in %.3f s (%.2f M events/s); peak RSS %.1f MiB\n",
              std::string(traceFormatName(opened->report.format)).c_str(),
              static_cast<unsigned long long>(opened->report.events),
              static_cast<unsigned long long>(opened->report.records), s, opened->report.events / s / 1e6,
              peakRssKb() / 1024.0);
  return 0;
}

int timeline(std::map<std::string, std::string>& a) {
  std::string path = a["--store"];
  if (path.empty()) die("timeline needs --store PATH");
  std::uint32_t maxItems = static_cast<std::uint32_t>(std::atoi(a.count("--max-items") ? a["--max-items"].c_str() : "2000"));
  int positions = std::atoi(a.count("--positions") ? a["--positions"].c_str() : "7");
  int repeat = std::atoi(a.count("--repeat") ? a["--repeat"].c_str() : "3");
  auto t0 = Clock::now();
  auto s = Store::open(path, StoreOptions{.readOnly = true});
  if (!s) die(s.error().message);
  Store& store = **s;
  double openMs = seconds(Clock::now() - t0) * 1e3;
  TimeSpan span = store.counts().timeSpan;
  std::uint64_t whole = span.endNs - span.startNs;
  std::printf("timeline: %s: %llu records over %.3f s, maxItems %u, opened in %.1f ms\n", path.c_str(),
              static_cast<unsigned long long>(store.counts().records), whole / 1e9, maxItems, openMs);
  std::printf("| window | queries | median ms | max ms | max items | records/merged |\n|---|---|---|---|---|---|\n");
  double worst = 0;
  std::uint64_t worstItems = 0;
  for (std::uint64_t w = whole;; w = std::max<std::uint64_t>(1000, w / 10)) {
    std::vector<double> ms;
    std::uint64_t maxSeen = 0;
    int raw = 0, merged = 0;
    for (int p = 0; p < positions; ++p) {
      std::uint64_t room = whole > w ? whole - w : 0;
      std::uint64_t start = span.startNs + (positions > 1 ? room / static_cast<std::uint64_t>(positions - 1) * static_cast<std::uint64_t>(p) : 0);
      for (int r = 0; r < repeat; ++r) {
        auto q0 = Clock::now();
        auto tl = store.timeline(start, start + w, maxItems);
        double q = seconds(Clock::now() - q0) * 1e3;
        if (!tl) die(tl.error().message);
        if (tl->items.size() > maxItems) die("more items than maxItems");
        ms.push_back(q);
        maxSeen = std::max<std::uint64_t>(maxSeen, tl->items.size());
        (tl->level < 0 ? raw : merged)++;
      }
    }
    std::sort(ms.begin(), ms.end());
    worst = std::max(worst, ms.back());
    worstItems = std::max(worstItems, maxSeen);
    char label[64];
    if (w >= 1'000'000'000) std::snprintf(label, sizeof label, "%.3g s", w / 1e9);
    else if (w >= 1'000'000) std::snprintf(label, sizeof label, "%.3g ms", w / 1e6);
    else std::snprintf(label, sizeof label, "%.3g µs", w / 1e3);
    std::printf("| %s | %zu | %.2f | %.2f | %llu | %d/%d |\n", label, ms.size(), ms[ms.size() / 2], ms.back(),
                static_cast<unsigned long long>(maxSeen), raw, merged);
    if (w <= 1000) break;
  }
  std::printf("timeline: slowest %.2f ms, most items %llu (maxItems %u); peak RSS %.1f MiB\n", worst,
              static_cast<unsigned long long>(worstItems), maxItems, peakRssKb() / 1024.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: strata_bench_gpu ingest|import|timeline --store PATH [...]");
  auto a = parseArgs(argc, argv);
  std::string cmd = argv[1];
  if (cmd == "ingest") return ingest(a);
  if (cmd == "import") return import(a);
  if (cmd == "timeline") return timeline(a);
  die("unknown command " + cmd);
}
