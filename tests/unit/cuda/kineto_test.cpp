// The Kineto importer on traces the tests write (plain, gzip, array form, base time first,
// last or absent): every field lands where it belongs, times exact to the nanosecond; a
// malformed or truncated file is an error naming the file and position, and imports nothing.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>

#include <boost/json.hpp>

#include "helpers.hpp"
#include "import/kineto_fields.hpp"
#include "strata/cuda/store_json.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;

namespace {

constexpr std::uint64_t kBase = 1'700'000'000'000'000'000ull;

std::vector<std::string> sampleEvents() {
  return {
      R"J({"ph": "M", "name": "process_name", "pid": 4000, "tid": 0, "args": {"name": "python"}})J",
      R"J({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4000, "tid": 4001, "ts": 100.0, "dur": 50.5, "args": {"External id": 10, "Input Dims": [[64, 64], [64, 64]], "Sequence number": 3}})J",
      R"J({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4000, "tid": 4001, "ts": 110.25, "dur": 5.125, "args": {"External id": 10, "cbid": 211, "correlation": 77}})J",
      R"J({"ph": "s", "id": 77, "pid": 4000, "tid": 4001, "ts": 110.25, "cat": "ac2g", "name": "ac2g"})J",
      R"J({"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float>(float*, int)", "pid": 0, "tid": 7, "ts": 120.3333, "dur": 20.0015, "args": {"External id": 10, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 77, "registers per thread": 32, "shared memory": 4096, "blocks per SM": 0.48, "warps per SM": 1.94, "grid": [64, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 3}})J",
      R"J({"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 120.3333, "cat": "ac2g", "name": "ac2g", "bp": "e"})J",
      R"J({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 145, "dur": 3, "args": {"External id": 11, "device": 0, "context": 1, "stream": 7, "correlation": 78, "bytes": 1048576, "memory bandwidth (GB/s)": 349.5}})J",
      R"J({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 8, "ts": 150.5, "dur": 1.5, "args": {"device": 0, "context": 1, "stream": 8, "correlation": 79, "bytes": 256}})J",
      R"J({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 160, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 80}})J",
      R"J({"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 4000, "tid": 4001, "ts": 90, "dur": 100})J",
      R"J({"ph": "X", "cat": "gpu_user_annotation", "name": "## forward ##", "pid": 0, "tid": 7, "ts": 119, "dur": 60})J",
      // A kernel whose args lack the correlation: the ac2g flow right after it supplies it.
      R"J({"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 200, "dur": 2, "args": {"device": 0, "stream": 7, "grid": [1, 1, 1], "block": [32, 1, 1]}})J",
      R"J({"ph": "f", "id": 99, "pid": 0, "tid": 7, "ts": 200, "cat": "ac2g", "name": "ac2g", "bp": "e"})J",
      R"J({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 50, "dur": 500})J",
      R"J({"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 50})J",
  };
}

void checkSample(Store& store, std::uint64_t base);

// Checks a store holding sampleEvents() imported with the given base time.
void checkSample(Store& store, const ImportReport& report, std::uint64_t base) {
  CHECK(report.events == 15);
  CHECK(report.records == 9);
  CHECK(report.devices == 1);
  CHECK(report.skipped.at("metadata events") == 1);
  CHECK(report.skipped.at("events of category 'Trace'") == 1);
  CHECK(report.skipped.at("events without a category") == 1);
  checkSample(store, base);
}

void checkSample(Store& store, std::uint64_t base) {
  auto s = store.summary(10);
  REQUIRE(s.ok());
  REQUIRE(s->kernels.size() == 2);
  CHECK(s->kernels[0].name == "void gemm_kernel<float>(float*, int)");
  CHECK(s->kernels[0].totalNs == 20002);  // 20.0015 µs, rounded half up to the ns
  CHECK(s->kernels[1].totalNs == 2000);
  REQUIRE(s->copies.size() == 2);
  CHECK(s->copies[0].kind == "HtoD");
  CHECK(s->copies[0].bytes == 1048576);
  CHECK(s->copies[1].kind == "memset");
  REQUIRE(s->syncs.size() == 1);
  CHECK(s->syncs[0].kind == "stream");
  CHECK(s->syncs[0].totalNs == 10000);
  CHECK(s->timeSpan.startNs == base + 90'000);
  CHECK(s->timeSpan.endNs == base + 202'000);
  REQUIRE(s->devices.size() == 1);
  CHECK(s->devices[0].propertiesKnown);
  CHECK(s->devices[0].name == "NVIDIA H100 80GB HBM3");

  auto tl = store.timeline(base + 120'000, base + 121'000, 100);
  REQUIRE(tl.ok());
  std::uint64_t kernelId = 0;
  for (auto& it : tl->items) {
    if (it.kind == RecordKind::Kernel) kernelId = it.id;
  }
  REQUIRE(kernelId);
  auto d = store.kernel(kernelId);
  REQUIRE(d.ok());
  CHECK(d->record.start == base + 120'333);  // 120.3333 µs: exact, from the text
  CHECK(d->record.end == base + 120'333 + 20'002);
  CHECK(d->record.grid[0] == 64);
  CHECK(d->record.block[0] == 128);
  CHECK(d->record.registersPerThread == 32);
  CHECK(d->record.staticSharedMemory + d->record.dynamicSharedMemory == 4096);
  CHECK(d->record.correlation == 77);
  CHECK(d->record.externalId == 10);
  CHECK(d->record.stream == 7);
  REQUIRE(d->launch);
  CHECK(d->launch->name == "cudaLaunchKernel");
  CHECK(d->launch->pid == 4000);
  CHECK(d->launch->tid == 4001);
  CHECK(d->launch->startNs == base + 110'250);
  CHECK(d->launch->endNs == base + 115'375);
  REQUIRE(d->op);
  CHECK(d->op->name == "aten::mm");
  REQUIRE(d->device);
  CHECK(d->device->smCount == 132);
  if (occupancyAvailable()) {
    REQUIRE(d->occupancy);
    CHECK(d->occupancy->activeBlocksPerSm == 16);
    CHECK(d->occupancy->occupancy == doctest::Approx(1.0));
  } else {
    CHECK(d->occupancyNote.find("cuda_occupancy.h") != std::string::npos);
  }

  // The flow supplied the correlation the second kernel's args lacked.
  auto relu = store.sql("SELECT correlation, block_x FROM kernels WHERE name = 'relu_kernel'", 5);
  REQUIRE(relu.ok());
  REQUIRE(relu->rows.size() == 1);
  CHECK(std::get<std::int64_t>(relu->rows[0][0]) == 99);
  auto markers = store.sql("SELECT count(*), sum(tid = 0) FROM markers", 5);
  REQUIRE(markers.ok());
  CHECK(std::get<std::int64_t>(markers->rows[0][0]) == 2);
  CHECK(std::get<std::int64_t>(markers->rows[0][1]) == 1);  // the GPU-side one
  auto copy = store.sql("SELECT src_kind, dst_kind FROM copies WHERE kind = 'memcpy'", 5);
  REQUIRE(copy.ok());
  CHECK(std::get<std::int64_t>(copy->rows[0][0]) == 1);  // pageable
  CHECK(std::get<std::int64_t>(copy->rows[0][1]) == 3);  // device
}

std::string baseFirst(const std::vector<std::string>& events) {
  std::string t = kinetoTrace(events, "");
  return "{\"baseTimeNanoseconds\": " + std::to_string(kBase) + ", " + t.substr(1);
}

}  // namespace

TEST_CASE("Kineto JSON: base time last (as torch.profiler writes it), plain and gzip") {
  TempDir dir;
  std::string text = kinetoTrace(sampleEvents());
  writeFile(dir.file("t.json"), text);
  writeGzip(dir.file("t.json.gz"), text);
  for (std::string name : {"t.json", "t.json.gz"}) {
    INFO(name);
    auto store = newStore(dir, name + ".strata");
    auto fmt = detectTraceFormat(dir.file(name));
    REQUIRE(fmt.ok());
    CHECK(*fmt == (name == "t.json" ? TraceFormat::KinetoJson : TraceFormat::KinetoJsonGz));
    auto r = importTrace(dir.file(name), *store);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    checkSample(*store, *r, kBase);
  }
}

TEST_CASE("Kineto JSON: base time first, absent (absolute µs), and the bare array form") {
  TempDir dir;
  writeFile(dir.file("first.json"), baseFirst(sampleEvents()));
  writeGzip(dir.file("first.json.gz"), baseFirst(sampleEvents()));
  {
    auto store = newStore(dir, "a.strata");
    auto r = importKineto(dir.file("first.json"), *store);
    REQUIRE(r.ok());
    checkSample(*store, *r, kBase);
    auto store2 = newStore(dir, "a2.strata");
    auto r2 = importKineto(dir.file("first.json.gz"), *store2);
    REQUIRE(r2.ok());
    checkSample(*store2, *r2, kBase);
  }
  // No base: older traces carry absolute µs since the epoch, more digits than a double keeps.
  std::vector<std::string> absolute = sampleEvents();
  for (auto& e : absolute) {
    auto at = e.find("\"ts\": ");
    if (at == std::string::npos) continue;
    at += 6;
    auto end = e.find_first_of(",}", at);
    std::string num = e.substr(at, end - at);
    auto dot = num.find('.');
    std::uint64_t whole = std::stoull(num.substr(0, dot)) + kBase / 1000;
    e.replace(at, end - at, std::to_string(whole) + (dot == std::string::npos ? "" : num.substr(dot)));
  }
  writeFile(dir.file("abs.json"), kinetoTrace(absolute, ""));
  {
    auto store = newStore(dir, "b.strata");
    auto r = importKineto(dir.file("abs.json"), *store);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    checkSample(*store, *r, kBase);
  }
  // The JSON Array Format: a bare list of events.
  std::string arr = "[\n";
  for (std::size_t i = 0; i < absolute.size(); ++i) arr += absolute[i] + (i + 1 < absolute.size() ? ",\n" : "\n");
  arr += "]\n";
  writeFile(dir.file("arr.json"), arr);
  {
    auto store = newStore(dir, "c.strata");
    auto r = importTrace(dir.file("arr.json"), *store);
    REQUIRE(r.ok());
    CHECK(r->records == 9);
    auto s = store->summary(5);
    REQUIRE(s.ok());
    CHECK(s->timeSpan.startNs == kBase + 90'000);
  }
}

namespace {

// The store must be exactly as before a failed import: one record, one name.
void checkUntouched(Store& store) {
  auto s = store.summary(10);
  REQUIRE(s.ok());
  CHECK(s->records == 1);
  REQUIRE(s->kernels.size() == 1);
  CHECK(s->kernels[0].name == "before");
  CHECK(s->devices.size() == 1);
  CHECK_FALSE(s->devices[0].propertiesKnown);
  auto n = store.sql("SELECT count(*) FROM strings", 5);
  REQUIRE(n.ok());
  CHECK(std::get<std::int64_t>(n->rows[0][0]) == 1);
}

std::unique_ptr<Store> storeWithOneRecord(const TempDir& dir, const std::string& name) {
  auto store = newStore(dir, name);
  std::uint32_t k = store->internName("before");
  std::vector<GpuRecord> recs{kernelRecord(5000, 6000, k)};
  REQUIRE(store->ingest(recs).ok());
  REQUIRE(store->flush().ok());
  return store;
}

// Many events, so that truncation falls after records were already ingested.
std::string bigTrace() {
  std::vector<std::string> events = sampleEvents();
  for (int i = 0; i < 30000; ++i) {
    events.push_back("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" + std::to_string(i % 50) +
                     "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(1000 + i * 3) +
                     ".5, \"dur\": 1.25, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " +
                     std::to_string(1000 + i) + "}}");
  }
  return kinetoTrace(events);
}

}  // namespace

TEST_CASE("Kineto JSON: a truncated file names the file and position, and imports nothing") {
  TempDir dir;
  std::string text = bigTrace();
  std::string cut = text.substr(0, text.size() * 3 / 5);
  writeFile(dir.file("cut.json"), cut);
  auto store = storeWithOneRecord(dir, "s.strata");
  auto r = importTrace(dir.file("cut.json"), *store);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == store_errors::kMalformed);
  CHECK(r.error().message.find(dir.file("cut.json")) == 0);
  CHECK(r.error().message.find("byte " + std::to_string(cut.size())) != std::string::npos);
  CHECK(r.error().message.find("truncated") != std::string::npos);
  CHECK(r.error().message.find("line ") != std::string::npos);
  checkUntouched(*store);

  // The same through gzip: the compressed stream cut short.
  writeGzip(dir.file("full.json.gz"), text);
  std::string gz = readFile(dir.file("full.json.gz"));
  writeFile(dir.file("cut.json.gz"), gz.substr(0, gz.size() / 2));
  auto g = importTrace(dir.file("cut.json.gz"), *store);
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().message.find(dir.file("cut.json.gz")) == 0);
  CHECK(g.error().message.find("truncated gzip") != std::string::npos);
  checkUntouched(*store);

  // Corrupted compressed bytes.
  std::string bad = gz;
  for (std::size_t i = bad.size() / 3; i < bad.size() / 3 + 64; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  writeFile(dir.file("bad.json.gz"), bad);
  auto b = importTrace(dir.file("bad.json.gz"), *store);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().message.find(dir.file("bad.json.gz")) == 0);
  checkUntouched(*store);

  // And after all that, a good import still works.
  writeFile(dir.file("good.json"), kinetoTrace(sampleEvents()));
  auto ok = importTrace(dir.file("good.json"), *store);
  REQUIRE(ok.ok());
  CHECK(ok->records == 9);
}

TEST_CASE("Kineto JSON: syntax and type errors name the line and column, or the event") {
  TempDir dir;
  auto store = storeWithOneRecord(dir, "s.strata");
  // Line 4 of this file, column 17: a stray character after "ph".
  std::string syntax = "{\n  \"traceEvents\": [\n    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 1, \"dur\": 1},\n    {\"ph\": \"X\" ? }\n  ]\n}\n";
  writeFile(dir.file("syntax.json"), syntax);
  auto r = importKineto(dir.file("syntax.json"), *store);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("line 4, column 16") != std::string::npos);
  checkUntouched(*store);

  std::vector<std::string> events = sampleEvents();
  events.push_back(R"J({"ph": "X", "cat": "kernel", "name": "x", "pid": 0, "tid": 7, "ts": "soon", "dur": 1})J");
  writeFile(dir.file("type.json"), kinetoTrace(events));
  auto t = importKineto(dir.file("type.json"), *store);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message.find("traceEvents[15]: \"ts\" is a string, not a number") != std::string::npos);
  checkUntouched(*store);

  writeFile(dir.file("none.json"), "{\"schemaVersion\": 1, \"events\": []}");
  auto n = importKineto(dir.file("none.json"), *store);
  REQUIRE_FALSE(n.ok());
  CHECK(n.error().message.find("no traceEvents") != std::string::npos);

  writeFile(dir.file("extra.json"), kinetoTrace(sampleEvents()) + "{}");
  auto x = importKineto(dir.file("extra.json"), *store);
  REQUIRE_FALSE(x.ok());
  CHECK(x.error().message.find("data after the end") != std::string::npos);
  checkUntouched(*store);

  writeFile(dir.file("text.txt"), "hello");
  auto u = importTrace(dir.file("text.txt"), *store);
  REQUIRE_FALSE(u.ok());
  CHECK(u.error().message.find("not a trace Strata reads") != std::string::npos);
}

TEST_CASE("openTrace: a Kineto file becomes a new store; a store opens as it is") {
  TempDir dir;
  writeFile(dir.file("t.json"), kinetoTrace(sampleEvents()));
  auto opened = openTrace(dir.file("t.json"), dir.file("t.strata"));
  REQUIRE(opened.ok());
  CHECK(opened->report.records == 9);
  CHECK(opened->store->meta("imported_format") == std::optional<std::string>("kineto-json"));
  REQUIRE(opened->store->close().ok());
  opened->store.reset();
  auto again = openTrace(dir.file("t.strata"), dir.file("unused.strata"));
  REQUIRE(again.ok());
  CHECK(again->report.format == TraceFormat::StrataStore);
  CHECK(again->store->counts().records == 9);
  CHECK_FALSE(std::filesystem::exists(dir.file("unused.strata")));
  // A failed import leaves no half-written store behind.
  writeFile(dir.file("bad.json"), "{\"traceEvents\": [");
  auto bad = openTrace(dir.file("bad.json"), dir.file("bad.strata"));
  REQUIRE_FALSE(bad.ok());
  CHECK_FALSE(std::filesystem::exists(dir.file("bad.strata")));
  // Strata's own store merged into another one.
  auto target = newStore(dir, "merged.strata");
  auto merged = importTrace(dir.file("t.strata"), *target);
  REQUIRE(merged.ok());
  CHECK(merged->format == TraceFormat::StrataStore);
  CHECK(merged->records == 9);
  CHECK(merged->devices == 1);
  checkSample(*target, kBase);
}

TEST_CASE("Kineto import report converts to JSON") {
  ImportReport r{.format = TraceFormat::KinetoJsonGz, .events = 3, .records = 2, .skipped = {{"metadata events", 1}}, .devices = 1};
  auto j = toJson(r);
  CHECK(j.at("format").as_string() == "kineto-json-gz");
  CHECK(j.at("skipped").at("metadata events").as_uint64() == 1);
}

TEST_CASE("Kineto times: µs text to ns exactly, whatever the digits") {
  struct Case {
    const char* text;
    std::int64_t ns;
  };
  const Case cases[] = {
      {"0", 0}, {"1", 1000}, {"120.3333", 120333}, {"20.0015", 20002}, {"20.0014", 20001}, {"-3.5", -3500},
      {"1700000000000120.333", 1'700'000'000'000'120'333}, {"1.5e3", 1'500'000}, {"2E-3", 2}, {"1e-4", 0},
      {"0.0005", 1}, {"123456789.123456789", 123'456'789'123}, {"0.1234565", 123}, {"0.0004999", 0}, {"9223372036854775.807", INT64_MAX},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::int64_t v = -1;
    REQUIRE(kineto::microsToNs(c.text, v));
    CHECK(v == c.ns);
  }
  std::int64_t v;
  for (const char* bad : {"", "-", "1.2.3", "abc", "1e", "9223372036854775.808", "1e400"}) {
    INFO(bad);
    CHECK_FALSE(kineto::microsToNs(bad, v));
  }
  CHECK(kineto::trailingNumber("stream 7 ", v));
  CHECK(v == 7);
  CHECK(kineto::copyKindFromName("Memcpy DtoD (Device -> Device)") == 8);
  CHECK(kineto::syncKindFromName("Event Sync") == 1);
}

TEST_CASE("Kineto JSON: progress counts the file's bytes; abandoned, the import keeps nothing") {
  TempDir dir;
  std::string text = kinetoTrace(sampleEvents());
  writeFile(dir.file("t.json"), text);
  writeGzip(dir.file("t.json.gz"), text);
  for (std::string name : {"t.json", "t.json.gz"}) {
    INFO(name);
    std::uint64_t size = std::filesystem::file_size(dir.file(name));
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    auto store = newStore(dir, name + ".strata");
    auto r = importTrace(dir.file(name), *store, [&](std::uint64_t done, std::uint64_t total) {
      seen.emplace_back(done, total);
      return true;
    });
    REQUIRE(r.ok());
    REQUIRE_FALSE(seen.empty());
    CHECK(seen.back() == std::make_pair(size, size));
    auto again = newStore(dir, name + ".cancelled.strata");
    auto cancelled = importTrace(dir.file(name), *again, [](std::uint64_t, std::uint64_t) { return false; });
    REQUIRE_FALSE(cancelled.ok());
    CHECK(cancelled.error().id == strata::errors::kCancelled);
    CHECK(cancelled.error().message == dir.file(name) + ": the import was cancelled (nothing of it was kept)");
    CHECK(again->counts().records == 0);
  }
}

TEST_CASE("Kineto JSON: with_stack's python_function events give a launch its Python frames") {
  TempDir dir;
  std::vector<std::string> events = sampleEvents();
  // Enclosing the launch call at 110.25 µs on thread 4001: three Python frames, a module
  // scope (no file and line) and a frame that ended before the launch.
  events.push_back(R"J({"ph": "X", "cat": "python_function", "name": "/w/train.py(30): main", "pid": 4000, "tid": 4001, "ts": 80, "dur": 120})J");
  events.push_back(R"J({"ph": "X", "cat": "python_function", "name": "/w/train.py(12): step", "pid": 4000, "tid": 4001, "ts": 95, "dur": 60})J");
  events.push_back(R"J({"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 4000, "tid": 4001, "ts": 98, "dur": 55})J");
  events.push_back(R"J({"ph": "X", "cat": "python_function", "name": "/w/model.py(7): forward", "pid": 4000, "tid": 4001, "ts": 99, "dur": 52})J");
  events.push_back(R"J({"ph": "X", "cat": "python_function", "name": "/w/data.py(3): load", "pid": 4000, "tid": 4001, "ts": 81, "dur": 5})J");
  writeFile(dir.file("t.json"), kinetoTrace(events));
  auto store = newStore(dir);
  REQUIRE(importTrace(dir.file("t.json"), *store).ok());
  auto tl = store->timeline(kBase + 120'000, kBase + 121'000, 100);
  REQUIRE(tl.ok());
  std::uint64_t kernelId = 0;
  for (auto& it : tl->items)
    if (it.kind == RecordKind::Kernel) kernelId = it.id;
  auto d = store->kernel(kernelId);
  REQUIRE(d.ok());
  REQUIRE(d->launch);
  REQUIRE(d->python.size() == 3);
  CHECK(d->python[0].function == "forward");
  CHECK(d->python[0].file == "/w/model.py");
  CHECK(d->python[0].line == 7);
  CHECK(d->python[1].function == "step");
  CHECK(d->python[2].function == "main");
  CHECK(d->python[2].line == 30);
  CHECK_FALSE(d->siteKnown);
}

// Backward ops run on autograd's engine thread, which runs no Python: their kernels have no
// python_function around them. Their sequence number (and the forward thread's, "Fwd thread
// id") is the one the forward op had when it made the node, so the kernel finds its forward
// line. Shaped as torch.profiler 2.x writes a training step: linear's forward (aten::linear
// peeks the number aten::t then takes; aten::transpose runs below autograd with none), its
// backward on thread 4002 while the main thread waits in backward().
TEST_CASE("Kineto JSON: a backward op's kernel finds the Python line of its forward op by sequence number") {
  TempDir dir;
  auto op = [](const char* name, int tid, int ts, int dur, int seq, int ext = 0) {
    std::string args = seq >= 0 ? R"("Fwd thread id": 1, "Sequence number": )" + std::to_string(seq) : std::string();
    if (ext) args += (args.empty() ? "" : ", ") + std::string(R"("External id": )") + std::to_string(ext);
    return R"({"ph": "X", "cat": "cpu_op", "name": ")" + std::string(name) + R"(", "pid": 4000, "tid": )" +
           std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
           R"(, "args": {)" + args + "}}";
  };
  auto py = [](const char* name, int ts, int dur) {
    return R"({"ph": "X", "cat": "python_function", "name": ")" + std::string(name) +
           R"(", "pid": 4000, "tid": 4001, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + "}";
  };
  auto launch = [](int tid, int ts, int ext, int corr, const char* kernel, int kts) {
    return std::vector<std::string>{
        R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4000, "tid": )" + std::to_string(tid) +
            R"(, "ts": )" + std::to_string(ts) + R"(, "dur": 3, "args": {"External id": )" + std::to_string(ext) +
            R"(, "correlation": )" + std::to_string(corr) + "}}",
        R"({"ph": "X", "cat": "kernel", "name": ")" + std::string(kernel) + R"(", "pid": 0, "tid": 7, "ts": )" +
            std::to_string(kts) + R"(, "dur": 5, "args": {"External id": )" + std::to_string(ext) +
            R"(, "device": 0, "stream": 7, "correlation": )" + std::to_string(corr) + "}}"};
  };
  std::vector<std::string> events = {
      py("/w/train.py(42): <module>", 10, 190),
      py("/w/model.py(17): forward", 20, 70),
      py("torch/nn/modules/linear.py(114): forward", 24, 60),
      op("aten::zeros", 4001, 12, 2, 7),  // grad mode on, no node made: peeks 7 too, outside forward()
      op("aten::linear", 4001, 25, 50, 7),
      op("aten::t", 4001, 26, 3, 7),
      op("aten::transpose", 4001, 27, 1, -1),
      op("aten::addmm", 4001, 30, 40, 8, 20),
      op("aten::relu", 4001, 92, 5, 9),
      py("/w/train.py(43): <module>", 200, 300),
      py("torch/_tensor.py(487): backward", 205, 290),
      op("autograd::engine::evaluate_function: AddmmBackward0", 4002, 300, 60, 8),
      op("AddmmBackward0", 4002, 301, 50, 8),
      op("aten::mm", 4002, 305, 20, -1, 30),
      op("autograd::engine::evaluate_function: TBackward0", 4002, 370, 30, 7),
      op("TBackward0", 4002, 371, 20, 7),
      op("aten::t", 4002, 372, 15, -1),
      op("aten::copy_", 4002, 373, 10, -1, 31),
      op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 4002, 410, 30, -1),
      op("aten::add_", 4002, 412, 20, -1, 32),
  };
  for (auto& e : launch(4001, 35, 20, 100, "forward_gemm", 40)) events.push_back(e);
  for (auto& e : launch(4002, 306, 30, 101, "backward_gemm", 320)) events.push_back(e);
  for (auto& e : launch(4002, 374, 31, 102, "backward_copy", 390)) events.push_back(e);
  for (auto& e : launch(4002, 414, 32, 103, "accumulate_add", 430)) events.push_back(e);
  writeFile(dir.file("t.json"), kinetoTrace(events));
  auto store = newStore(dir);
  REQUIRE(importTrace(dir.file("t.json"), *store).ok());
  auto tl = store->timeline(kBase, kBase + 1'000'000, 1000);
  REQUIRE(tl.ok());
  auto detail = [&](const char* kernel) {
    for (auto& it : tl->items)
      if (it.kind == RecordKind::Kernel && it.name == kernel) return store->kernel(it.id);
    FAIL("no kernel " << kernel);
    return store->kernel(0);
  };
  auto lines = [](const std::vector<PythonFrame>& frames) {
    std::vector<std::string> out;
    for (auto& f : frames) out.push_back(f.file + ":" + std::to_string(f.line) + " " + f.function);
    return out;
  };
  const std::vector<std::string> forward = {"torch/nn/modules/linear.py:114 forward", "/w/model.py:17 forward",
                                            "/w/train.py:42 <module>"};

  auto fwd = detail("forward_gemm");
  REQUIRE(fwd.ok());
  CHECK(lines(fwd->python) == forward);
  CHECK_FALSE(fwd->backwardOf);

  auto mm = detail("backward_gemm");
  REQUIRE(mm.ok());
  CHECK(mm->python.empty());
  REQUIRE(mm->op);
  CHECK(mm->op->name == "aten::mm");
  REQUIRE(mm->backwardOf);
  CHECK(mm->backwardOf->backward.name == "AddmmBackward0");
  CHECK(mm->backwardOf->backward.tid == 4002);
  CHECK(mm->backwardOf->sequenceNumber == 8);
  CHECK(mm->backwardOf->forward.name == "aten::addmm");
  CHECK(mm->backwardOf->forward.tid == 4001);
  CHECK(mm->backwardOf->forward.startNs == kBase + 30'000);
  CHECK(lines(mm->backwardOf->python) == forward);

  // Three ops peeked 7: the latest, aten::t, made TBackward0's node (not aten::linear around it,
  // nor aten::zeros before the module's forward).
  auto copy = detail("backward_copy");
  REQUIRE(copy.ok());
  REQUIRE(copy->backwardOf);
  CHECK(copy->backwardOf->backward.name == "TBackward0");
  CHECK(copy->backwardOf->forward.name == "aten::t");
  CHECK(copy->backwardOf->forward.startNs == kBase + 26'000);
  CHECK(lines(copy->backwardOf->python) == forward);

  // AccumulateGrad has no forward op (no sequence number): nothing is made up.
  auto acc = detail("accumulate_add");
  REQUIRE(acc.ok());
  CHECK(acc->python.empty());
  CHECK_FALSE(acc->backwardOf);
}

// A trace torch.profiler wrote itself, not a fixture shaped by hand: Debian's torch 1.13 (built
// without Kineto) writes its own exporter's form, a bare array of operators with no category
// under the pid "CPU functions". Every operator it counted must import, as many times.
TEST_CASE("a trace torch.profiler itself wrote imports every operator torch counted") {
  const char* python = std::getenv("STRATA_TORCH_PYTHON");
  const std::string interpreter = python && *python ? python : "/usr/bin/python3";
  TempDir dir;
  const std::string trace = dir.file("torch.json");
  const std::string command = interpreter + " " + STRATA_TORCH_PROFILER_SCRIPT + " " + trace + " 2>&1";
  std::string out;
  if (std::FILE* p = popen(command.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    if (pclose(p) != 0 && out.find("No module named 'torch'") != std::string::npos) {
      std::printf("STRATA-SKIP a trace torch.profiler itself wrote imports every operator torch counted: PyTorch is not "
                  "installed for %s (Debian: apt-get install python3-torch)\n", interpreter.c_str());
      return;
    }
  }
  const auto line = out.substr(out.rfind('{'));
  auto counted = boost::json::parse(line).as_object();
  REQUIRE_MESSAGE(counted.contains("aten::mm"), out);
  CHECK(counted.at("aten::mm").as_int64() == 10);

  auto opened = openTrace(trace, dir.file("torch.strata"));
  REQUIRE_MESSAGE(opened.ok(), opened.error().message);
  CHECK(opened->report.format == TraceFormat::KinetoJson);
  CHECK(opened->report.skipped.count("events without a category") == 0);
  auto rows = opened->store->sql("SELECT name, count(*) FROM cpu_ops GROUP BY name", 1000);
  REQUIRE(rows.ok());
  std::map<std::string, std::int64_t> imported;
  for (const auto& r : rows->rows) imported[std::get<std::string>(r[0])] = std::get<std::int64_t>(r[1]);
  for (const auto& [name, count] : counted) {
    CHECK_MESSAGE(imported[std::string(name)] == count.as_int64(), std::string(name));
  }
  CHECK(imported.size() == counted.size());
  // On the thread torch named, with their times: the timeline shows them.
  auto s = opened->store->counts();
  CHECK(s.records == static_cast<std::uint64_t>(std::accumulate(imported.begin(), imported.end(), std::int64_t{0},
                                                                 [](std::int64_t n, const auto& kv) { return n + kv.second; })));
  CHECK(s.timeSpan.endNs > s.timeSpan.startNs);
}
