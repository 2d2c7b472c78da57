// gpuExport: Chrome trace-event JSON with every timed record once, exact times, events on one
// thread that nest (overlaps moved to lanes of their own), readable again by the importer.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <map>

#include "helpers.hpp"
#include "strata/cuda/store_json.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;
namespace json = boost::json;

namespace {

constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000ull;

struct Ev {
  std::string name, cat;
  std::uint64_t ts, dur;  // ns, from the µs text
};

// "12.345" µs -> 12345 ns, from the value Boost.JSON parsed (exact for these magnitudes).
std::uint64_t ns(const json::value& v) {
  return static_cast<std::uint64_t>(std::llround(v.to_number<double>() * 1000.0));
}

std::unique_ptr<Store> build(const TempDir& dir, std::vector<GpuRecord>& recs) {
  auto store = newStore(dir);
  std::uint32_t op = store->internName("aten::linear"), mm = store->internName("aten::mm"),
                launch = store->internName("cudaLaunchKernel"), k = store->internName("_Z4gemmv"),
                q = store->internName("quote \"and\" \\ backslash");
  // Nested CPU ranges: linear > mm > launch.
  GpuRecord a = apiRecord(kT0 + 1000, kT0 + 9000, op, 50, 51, 0, RecordKind::CpuOp);
  GpuRecord b = apiRecord(kT0 + 2000, kT0 + 8000, mm, 50, 51, 0, RecordKind::CpuOp);
  GpuRecord c = apiRecord(kT0 + 3000, kT0 + 4000, launch, 50, 51, 1);
  // Kernels on one stream that overlap without nesting (as records may when clocks disagree).
  GpuRecord k1 = kernelRecord(kT0 + 5000, kT0 + 7000, k, 7, 0, 1);
  GpuRecord k2 = kernelRecord(kT0 + 6000, kT0 + 8500, q, 7);
  GpuRecord k3 = kernelRecord(kT0 + 9000, kT0 + 9500, k, 7);
  GpuRecord untimed = kernelRecord(0, 0, k, 7);
  recs = {a, b, c, k1, k2, k3, untimed};
  REQUIRE(store->ingest(recs).ok());
  return store;
}

std::vector<Ev> events(const json::value& doc, std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Ev>>* byThread = nullptr) {
  std::vector<Ev> out;
  for (const json::value& e : doc.at("traceEvents").as_array()) {
    if (e.at("ph").as_string() != "X") continue;
    Ev ev{std::string(e.at("name").as_string()), std::string(e.at("cat").as_string()), ns(e.at("ts")), ns(e.at("dur"))};
    out.push_back(ev);
    if (byThread) (*byThread)[{e.at("pid").as_int64(), e.at("tid").as_int64()}].push_back(ev);
  }
  return out;
}

}  // namespace

TEST_CASE("export: every timed record once, exact times, nesting events per thread") {
  TempDir dir;
  std::vector<GpuRecord> recs;
  auto store = build(dir, recs);
  auto report = store->exportChrome(dir.file("trace.json"));
  REQUIRE_MESSAGE(report.ok(), (report.ok() ? "" : report.error().message));
  CHECK(report->events == 6);
  CHECK(report->skippedUntimed == 1);
  CHECK(report->extraLanes == 1);  // the second kernel overlaps the first without nesting
  CHECK(report->bytes == readFile(dir.file("trace.json")).size());
  json::value doc = json::parse(readFile(dir.file("trace.json")));
  CHECK(doc.at("baseTimeNanoseconds").to_number<std::uint64_t>() == kT0 + 1000);
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Ev>> byThread;
  auto evs = events(doc, &byThread);
  REQUIRE(evs.size() == 6);
  auto gemm = std::find_if(evs.begin(), evs.end(), [](auto& e) { return e.name == "gemm()"; });
  REQUIRE(gemm != evs.end());
  CHECK(gemm->cat == "kernel");
  CHECK(gemm->ts == 4000);  // kT0 + 5000 relative to the first record
  CHECK(gemm->dur == 2000);
  CHECK(std::count_if(evs.begin(), evs.end(), [](auto& e) { return e.name == "quote \"and\" \\ backslash"; }) == 1);
  // On every Chrome thread, X events nest or are disjoint.
  for (auto& [thread, list] : byThread) {
    std::sort(list.begin(), list.end(), [](auto& x, auto& y) { return x.ts != y.ts ? x.ts < y.ts : x.dur > y.dur; });
    std::vector<std::uint64_t> open;
    for (auto& e : list) {
      while (!open.empty() && open.back() <= e.ts) open.pop_back();
      CHECK((open.empty() || open.back() >= e.ts + e.dur));
      open.push_back(e.ts + e.dur);
    }
  }
  // Names for processes and threads, the lane included.
  int names = 0;
  for (const json::value& e : doc.at("traceEvents").as_array()) {
    if (e.at("ph").as_string() == "M") ++names;
  }
  CHECK(names == 5);  // process 50, GPU 0; thread 51, stream 7, stream 7 (overlap 1)
  CHECK(toJson(*report).at("events").as_uint64() == 6);
}

TEST_CASE("export: a window, a re-import, and a path that cannot be written") {
  TempDir dir;
  std::vector<GpuRecord> recs;
  auto store = build(dir, recs);
  auto part = store->exportChrome(dir.file("part.json"), ExportOptions{.window = TimeSpan{kT0 + 6500, kT0 + 8800}});
  REQUIRE(part.ok());
  auto evs = events(json::parse(readFile(dir.file("part.json"))));
  // linear, mm, k1, k2 overlap [6500, 8800); the launch (3000-4000) and k3 (9000-) do not.
  CHECK(evs.size() == 4);
  CHECK(part->events == 4);

  auto whole = store->exportChrome(dir.file("whole.json"));
  REQUIRE(whole.ok());
  auto again = newStore(dir, "again.strata");
  auto imported = importKineto(dir.file("whole.json"), *again);
  REQUIRE_MESSAGE(imported.ok(), (imported.ok() ? "" : imported.error().message));
  CHECK(imported->records == 6);
  auto a = store->summary(10), b = again->summary(10);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->kernels.size() == b->kernels.size());
  for (std::size_t i = 0; i < a->kernels.size(); ++i) {
    CHECK(a->kernels[i].name == b->kernels[i].name);
    CHECK(a->kernels[i].totalNs == b->kernels[i].totalNs);
  }
  CHECK(b->timeSpan.startNs == a->timeSpan.startNs);
  CHECK(b->timeSpan.endNs == a->timeSpan.endNs);

  auto bad = store->exportChrome(dir.file("no/such/dir/trace.json"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().id == store_errors::kIo);
  CHECK(bad.error().message.find("no/such/dir/trace.json.tmp") != std::string::npos);
  CHECK(bad.error().message.find("No such file or directory") != std::string::npos);
}
