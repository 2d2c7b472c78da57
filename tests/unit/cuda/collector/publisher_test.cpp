// The publisher: strings and sites ahead of the records that use them, NVTX ranges paired,
// external ids and launch sites joined by correlation id, drops counted when the ring is full.
#include <doctest/doctest.h>
#include <unistd.h>

#include "publisher.hpp"
#include "ring_writer.hpp"
#include "support.hpp"

using namespace strata::cuda;
using namespace strata::cuda::collector;
using namespace strata::cuda::test;
using What = ParsedActivity::What;

namespace {

struct Fixture {
  ScratchDir dir;
  ring::RingWriter ring;
  LaunchJoin join{1 << 10};
  std::unique_ptr<Publisher> pub;
  std::unique_ptr<SessionReader> reader;
  Fixture() {
    REQUIRE(ring.create(dir.path(), "t", 1 << 20, ring::Mode::Stacks).ok());
    pub = std::make_unique<Publisher>(ring, 4242, &join);
    reader = std::make_unique<SessionReader>(dir.path(), "t");
  }
  Batch poll() {
    Batch b;
    REQUIRE(reader->poll(b).ok());
    return b;
  }
  std::unique_ptr<RingReader> raw() {
    auto r = RingReader::open(ring.path());
    REQUIRE(r.ok());
    return std::move(*r);
  }
};

ParsedActivity record(RecordKind kind, std::uint32_t correlation, const char* text = nullptr) {
  ParsedActivity p;
  p.what = What::Record;
  p.record.kind = kind;
  p.record.correlation = correlation;
  p.record.start = 100;
  p.record.end = 200;
  p.text = text;
  return p;
}

}  // namespace

TEST_CASE("names are interned once and always reach the ring before the records that use them") {
  Fixture f;
  std::vector<ParsedActivity> items = {record(RecordKind::Kernel, 1, "_Z1kv"), record(RecordKind::Kernel, 2, "_Z1kv"),
                                       record(RecordKind::Kernel, 3, "_Z1jv")};
  f.pub->publish(items.data(), items.size());
  auto raw = f.raw();
  KeepAll got;
  REQUIRE(raw->drain(got).ok());
  CHECK(std::string(got.order.begin(), got.order.end()) == "ssrrr");
  REQUIRE(got.records.size() == 3);
  CHECK(got.records[0].name == got.records[1].name);
  CHECK(got.records[0].name != got.records[2].name);
  CHECK(got.records[0].pid == 4242);  // GPU records carry the collector's process
}

TEST_CASE("NVTX ranges become one record from their start to their end; instants have no length") {
  Fixture f;
  auto marker = [](What what, std::uint32_t id, std::uint64_t t, const char* name) {
    ParsedActivity p;
    p.what = what;
    p.record.kind = RecordKind::Marker;
    p.record.start = p.record.end = t;
    p.record.tid = 11;
    p.markerId = id;
    p.text = name;
    return p;
  };
  std::vector<ParsedActivity> first = {marker(What::MarkerStart, 1, 1000, "forward"),
                                       marker(What::MarkerInstant, 2, 1500, "checkpoint"),
                                       marker(What::MarkerEnd, 9, 1600, nullptr)};  // its start predates collection
  f.pub->publish(first.data(), first.size());
  CHECK(f.pub->openMarkers() == 1);
  std::vector<ParsedActivity> second = {marker(What::MarkerEnd, 1, 3000, nullptr)};  // in a later buffer
  f.pub->publish(second.data(), second.size());
  CHECK(f.pub->openMarkers() == 0);
  Batch b = f.poll();
  REQUIRE(b.records.size() == 2);
  CHECK(f.reader->string(b.records[0].name) == "checkpoint");
  CHECK(b.records[0].start == 1500);
  CHECK(b.records[0].end == 1500);
  CHECK(f.reader->string(b.records[1].name) == "forward");
  CHECK(b.records[1].start == 1000);
  CHECK(b.records[1].end == 3000);
  CHECK(b.records[1].tid == 11);
}

TEST_CASE("external ids and launch sites join the API and kernel records of their correlation id") {
  Fixture f;
  f.pub->expectSites(true);
  CapturedSite site;
  site.id = 1;
  site.cbid = 211;
  site.domain = 2;
  site.api = "cudaLaunchKernel";
  site.python = {{"train_step", "/src/train.py", 42}};
  site.native = {{0x401234, 0x1234, "/usr/bin/python3.12", "PyObject_Vectorcall"}};
  f.pub->addSite(site);
  f.join.set(10, 1);

  ParsedActivity ext;
  ext.what = What::ExternalCorrelation;
  ext.record.correlation = 10;
  ext.record.externalId = 555;
  ParsedActivity api = record(RecordKind::RuntimeApi, 10, "cudaLaunchKernel");
  api.record.pid = 4242;
  api.record.tid = 7;
  std::vector<ParsedActivity> host = {ext, api};
  f.pub->publish(host.data(), host.size());
  // The kernel finishes later, in another buffer; one more kernel launched before collection
  // began has no site.
  std::vector<ParsedActivity> device = {record(RecordKind::Kernel, 10, "_Z4stepv"), record(RecordKind::Kernel, 11, "_Z4stepv")};
  f.pub->publish(device.data(), device.size());

  Batch b = f.poll();
  REQUIRE(b.sites.size() == 1);
  const LaunchSite& s = b.sites[0];
  CHECK(s.api == "cudaLaunchKernel");
  REQUIRE(s.python.size() == 1);
  CHECK(s.python[0].function == "train_step");
  CHECK(s.python[0].file == "/src/train.py");
  CHECK(s.python[0].line == 42);
  REQUIRE(s.nativeFrames.size() == 1);
  CHECK(s.native[0] == 0x401234);
  CHECK(s.nativeFrames[0].elfAddress == 0x1234);
  CHECK(s.nativeFrames[0].module == "/usr/bin/python3.12");
  CHECK(s.nativeFrames[0].symbol == "PyObject_Vectorcall");
  REQUIRE(b.records.size() == 3);
  CHECK(b.records[0].kind == RecordKind::RuntimeApi);
  CHECK(b.records[0].externalId == 555);
  CHECK(b.records[0].site == s.id);
  CHECK(b.records[1].externalId == 555);
  CHECK(b.records[1].site == s.id);
  CHECK(b.records[2].site == 0);
  CHECK(b.records[2].externalId == 0);
  CHECK(f.reader->processes()[0].unjoinedLaunches == 1);
}

TEST_CASE("a synchronization record gets the device its context was seen on") {
  Fixture f;
  ParsedActivity k = record(RecordKind::Kernel, 1, "_Z1kv");
  k.record.context = 3;
  k.record.device = 2;
  ParsedActivity s = record(RecordKind::Synchronization, 2);
  s.record.context = 3;
  std::vector<ParsedActivity> items = {k, s};
  f.pub->publish(items.data(), items.size());
  Batch b = f.poll();
  REQUIRE(b.records.size() == 2);
  CHECK(b.records[1].device == 2);
}

TEST_CASE("when the ring is full, records are dropped and counted, and names wait for room") {
  Fixture f;
  // Fill the ring with records nobody reads.
  std::vector<ParsedActivity> filler(9000, record(RecordKind::Memcpy, 1));
  f.pub->publish(filler.data(), filler.size());
  const std::uint64_t fits = ring::kMinCapacity / (sizeof(ring::MessageHeader) + sizeof(GpuRecord));
  auto raw = f.raw();
  CHECK(raw->status().droppedRecords == filler.size() - fits);
  // A new name cannot be written: the records that need it are dropped too, never written
  // ahead of it.
  std::vector<ParsedActivity> named = {record(RecordKind::Kernel, 2, "_Z5laterv"), record(RecordKind::Kernel, 3, "_Z5laterv")};
  f.pub->publish(named.data(), named.size());
  CHECK(f.pub->pendingMessages() == 1);
  CHECK(raw->status().droppedRecords == filler.size() - fits + 2);
  KeepAll got;
  REQUIRE(raw->drain(got).ok());
  CHECK(got.records.size() == fits);
  CHECK(got.strings.empty());
  // With room again the name goes first, then the records.
  f.pub->publish(named.data(), named.size());
  KeepAll more;
  REQUIRE(raw->drain(more).ok());
  CHECK(std::string(more.order.begin(), more.order.end()) == "srr");
  CHECK(more.strings[0].second == "_Z5laterv");
  CHECK(more.records[0].name == more.strings[0].first);
}

TEST_CASE("a CUDA error message carries its strings with it") {
  Fixture f;
  CudaErrorInfo e;
  e.result = 710;
  e.domain = 2;
  e.cbid = 165;
  e.tid = 99;
  e.api = "cudaDeviceSynchronize";
  e.error = "cudaErrorAssert";
  e.lastKernel = "_Z6assertv";
  e.lastCorrelation = 12;
  e.callerModule = "/bin/prog";
  e.callerElfAddress = 0x1abc;
  f.pub->addCudaError(e);
  REQUIRE(f.pub->flushPending());
  Batch b = f.poll();
  REQUIRE(b.errors.size() == 1);
  CHECK(b.errors[0].pid == static_cast<std::uint32_t>(getpid()));
  CHECK(b.errors[0].tid == 99);
  CHECK(b.errors[0].result == 710);
  CHECK(b.errors[0].api == "cudaDeviceSynchronize");
  CHECK(b.errors[0].error == "cudaErrorAssert");
  CHECK(b.errors[0].lastKernel == "_Z6assertv");
  CHECK(b.errors[0].lastCorrelation == 12);
  CHECK(b.errors[0].callerModule == "/bin/prog");
  CHECK(b.errors[0].callerElfAddress == 0x1abc);
}
