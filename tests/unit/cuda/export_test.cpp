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

namespace {

// A minimal reader of the protobuf the Perfetto export writes: fields of one message.
struct Field {
  int number = 0;
  std::uint64_t value = 0;    // varint
  std::string_view bytes;     // length-delimited
};
std::vector<Field> fields(std::string_view buf) {
  std::vector<Field> out;
  std::size_t i = 0;
  auto varint = [&] {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      REQUIRE(i < buf.size());
      auto b = static_cast<unsigned char>(buf[i++]);
      v |= std::uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
  };
  while (i < buf.size()) {
    std::uint64_t key = varint();
    Field f;
    f.number = static_cast<int>(key >> 3);
    if ((key & 7) == 0) {
      f.value = varint();
    } else {
      REQUIRE((key & 7) == 2);
      std::uint64_t n = varint();
      REQUIRE(i + n <= buf.size());
      f.bytes = buf.substr(i, n);
      i += n;
    }
    out.push_back(f);
  }
  return out;
}
const Field* field(const std::vector<Field>& fs, int n) {
  for (const auto& f : fs)
    if (f.number == n) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("export as Perfetto protobuf: descriptors first, slices begun and ended on their tracks, nested") {
  TempDir dir;
  std::vector<GpuRecord> recs;
  auto store = build(dir, recs);
  auto report = store->exportTrace(dir.file("trace.pftrace"), ExportFormat::Perfetto);
  REQUIRE_MESSAGE(report.ok(), (report.ok() ? "" : report.error().message));
  CHECK(report->events == 6);
  CHECK(report->extraLanes == 1);
  std::string file = readFile(dir.file("trace.pftrace"));
  CHECK(report->bytes == file.size());
  std::map<std::uint64_t, std::string> tracks;  // uuid -> thread name
  std::map<std::uint64_t, std::vector<std::uint64_t>> open;
  std::map<std::uint64_t, std::uint64_t> lastTs;  // by sequence
  std::vector<std::string> names;
  int processes = 0;
  for (const Field& p : fields(file)) {
    REQUIRE(p.number == 1);  // Trace.packet
    auto pf = fields(p.bytes);
    const Field* ts = field(pf, 8);
    REQUIRE(ts);
    if (const Field* d = field(pf, 60)) {
      auto df = fields(d->bytes);
      if (const Field* t = field(df, 4)) tracks[field(df, 1)->value] = std::string(field(fields(t->bytes), 5)->bytes);
      if (field(df, 3)) ++processes;
      continue;
    }
    const Field* ev = field(pf, 11);
    REQUIRE(ev);
    const Field* seq = field(pf, 10);
    REQUIRE(seq);
    if (lastTs.count(seq->value)) CHECK(ts->value >= lastTs[seq->value]);
    lastTs[seq->value] = ts->value;
    auto ef = fields(ev->bytes);
    std::uint64_t uuid = field(ef, 11)->value;
    REQUIRE(tracks.count(uuid));
    if (field(ef, 9)->value == 1) {
      names.emplace_back(field(ef, 23)->bytes);
      CHECK(field(ef, 22));  // a category
      open[uuid].push_back(ts->value);
    } else {
      CHECK(field(ef, 9)->value == 2);
      REQUIRE_FALSE(open[uuid].empty());
      CHECK(open[uuid].back() <= ts->value);
      open[uuid].pop_back();
    }
  }
  for (auto& [uuid, stack] : open) CHECK(stack.empty());
  CHECK(names.size() == 6);
  CHECK(std::count(names.begin(), names.end(), "gemm()") == 2);
  CHECK(std::count(names.begin(), names.end(), "quote \"and\" \\ backslash") == 1);
  CHECK(processes == 2);  // process 50, GPU 0
  std::vector<std::string> threadNames;
  for (auto& [uuid, name] : tracks) threadNames.push_back(name);
  std::sort(threadNames.begin(), threadNames.end());
  CHECK(threadNames == std::vector<std::string>{"stream 7", "stream 7 (overlap 1)", "thread 51"});
}
