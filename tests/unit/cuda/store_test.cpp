// The store file and gpuSummary: what goes in comes back, counted and totalled exactly,
// across reopening; zero and out-of-order times tolerated; writes refused where they must be.
#include <doctest/doctest.h>

#include <filesystem>

#include "helpers.hpp"
#include "strata/cuda/store_json.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;

TEST_CASE("summary counts and totals kernels, copies and syncs exactly") {
  TempDir dir;
  auto store = newStore(dir);
  std::uint32_t gemm = store->internName("_Z4gemmPfS_S_i");
  std::uint32_t relu = store->internName("relu_kernel");
  std::vector<GpuRecord> recs;
  std::uint64_t t = 1'700'000'000'000'000'000ull;
  std::uint64_t gemmTotal = 0, reluTotal = 0;
  for (int i = 0; i < 5000; ++i) {
    std::uint64_t d = 1000 + static_cast<std::uint64_t>(i % 7) * 10;
    recs.push_back(kernelRecord(t, t + d, i % 3 ? gemm : relu, 7 + i % 2));
    (i % 3 ? gemmTotal : reluTotal) += d;
    t += 2000;
  }
  GpuRecord copy;
  copy.kind = RecordKind::Memcpy;
  copy.copyKind = 1;  // HtoD
  copy.bytes = 4096;
  copy.start = t;
  copy.end = t + 500;
  copy.stream = 7;
  recs.push_back(copy);
  recs.push_back(copy);
  GpuRecord memset;
  memset.kind = RecordKind::Memset;
  memset.bytes = 100;
  memset.start = t + 1000;
  memset.end = t + 1100;
  memset.stream = 8;
  recs.push_back(memset);
  GpuRecord sync;
  sync.kind = RecordKind::Synchronization;
  sync.copyKind = 3;  // stream
  sync.start = t + 2000;
  sync.end = t + 9000;
  sync.stream = 7;
  recs.push_back(sync);
  REQUIRE(store->ingest(recs).ok());
  REQUIRE(store->addDropped(1234, 17).ok());

  auto s = store->summary(10);
  REQUIRE(s.ok());
  REQUIRE(s->kernels.size() == 2);
  CHECK(s->kernels[0].name == "gemm(float*, float*, float*, int)");  // demangled
  CHECK(s->kernels[0].count == 3333);
  CHECK(s->kernels[0].totalNs == gemmTotal);
  CHECK(s->kernels[0].minNs == 1000);
  CHECK(s->kernels[0].maxNs == 1060);
  CHECK(s->kernels[0].avgNs == gemmTotal / 3333);
  CHECK(s->kernels[1].name == "relu_kernel");
  CHECK(s->kernels[1].count == 1667);
  CHECK(s->kernels[1].totalNs == reluTotal);
  REQUIRE(s->copies.size() == 2);
  CHECK(s->copies[0].kind == "HtoD");
  CHECK(s->copies[0].count == 2);
  CHECK(s->copies[0].bytes == 8192);
  CHECK(s->copies[0].totalNs == 1000);
  CHECK(s->copies[1].kind == "memset");
  CHECK(s->copies[1].bytes == 100);
  REQUIRE(s->syncs.size() == 1);
  CHECK(s->syncs[0].kind == "stream");
  CHECK(s->syncs[0].totalNs == 7000);
  CHECK(s->timeSpan.startNs == 1'700'000'000'000'000'000ull);
  CHECK(s->timeSpan.endNs == t + 9000);
  CHECK(s->records == 5004);
  CHECK(s->dropped == 17);
  CHECK(s->streams.size() == 2);
  REQUIRE(s->devices.size() == 1);
  CHECK(s->devices[0].kernels == 5000);
  CHECK_FALSE(s->devices[0].propertiesKnown);

  // Only the top `limit`.
  auto top1 = store->summary(1);
  REQUIRE(top1.ok());
  CHECK(top1->kernels.size() == 1);
  CHECK(top1->kernelNames == 2);

  auto j = toJson(*s);
  CHECK(j.at("kernels").as_array().at(0).at("totalNs").as_uint64() == gemmTotal);
  CHECK(j.at("timeSpan").at("endNs").to_number<std::uint64_t>() == t + 9000);
}

TEST_CASE("a reopened store answers the same, and keeps one file") {
  TempDir dir;
  std::string path = dir.file("keep.strata");
  std::uint64_t total = 0;
  {
    auto s = Store::create(path);
    REQUIRE(s.ok());
    std::uint32_t k = (*s)->internName("k");
    std::vector<GpuRecord> recs;
    for (int i = 0; i < 3000; ++i) {
      recs.push_back(kernelRecord(1'000'000'000 + static_cast<std::uint64_t>(i) * 10'000, 1'000'000'000 + static_cast<std::uint64_t>(i) * 10'000 + 3000, k));
      total += 3000;
    }
    REQUIRE((*s)->ingest(recs).ok());
    REQUIRE((*s)->close().ok());
  }
  CHECK(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  CHECK_FALSE(std::filesystem::exists(path + "-shm"));
  auto s = Store::open(path);
  REQUIRE(s.ok());
  auto sum = (*s)->summary(5);
  REQUIRE(sum.ok());
  REQUIRE(sum->kernels.size() == 1);
  CHECK(sum->kernels[0].count == 3000);
  CHECK(sum->kernels[0].totalNs == total);
  // More records after reopening land in the same statistics and pages.
  std::uint32_t k = (*s)->internName("k");
  std::vector<GpuRecord> more{kernelRecord(2'000'000'000, 2'000'001'000, k)};
  REQUIRE((*s)->ingest(more).ok());
  sum = (*s)->summary(5);
  REQUIRE(sum.ok());
  CHECK(sum->kernels[0].count == 3001);
  auto tl = (*s)->timeline(1'000'000'000, 2'000'002'000, 10000);
  REQUIRE(tl.ok());
  std::uint64_t n = 0;
  for (auto& i : tl->items) n += i.count;
  CHECK(n == 3001);
}

TEST_CASE("zero and out-of-order timestamps are kept and tolerated") {
  TempDir dir;
  auto store = newStore(dir);
  std::uint32_t k = store->internName("k");
  std::vector<GpuRecord> recs;
  std::uint64_t base = 5'000'000'000;
  // Descending starts, a record with no times, one whose end precedes its start.
  for (int i = 99; i >= 0; --i) recs.push_back(kernelRecord(base + static_cast<std::uint64_t>(i) * 100'000, base + static_cast<std::uint64_t>(i) * 100'000 + 500, k));
  recs.push_back(kernelRecord(0, 0, k));
  recs.push_back(kernelRecord(base + 50, base + 10, k));
  REQUIRE(store->ingest(recs).ok());
  auto s = store->summary(5);
  REQUIRE(s.ok());
  CHECK(s->records == 102);
  CHECK(s->untimed == 1);
  CHECK(s->kernels[0].count == 102);
  CHECK(s->kernels[0].minNs == 0);  // the one whose end came before its start: an instant
  CHECK(s->timeSpan.startNs == base);
  auto tl = store->timeline(base, base + 100 * 100'000, 1000);
  REQUIRE(tl.ok());
  CHECK(tl->level == -1);
  CHECK(tl->items.size() == 101);  // every timed record, the untimed one never
  for (std::size_t i = 1; i < tl->items.size(); ++i) CHECK(tl->items[i - 1].startNs <= tl->items[i].startNs);
}

TEST_CASE("ingest refuses a name id internName never returned, before buffering any record") {
  TempDir dir;
  auto store = newStore(dir);
  std::uint32_t k = store->internName("k");
  std::vector<GpuRecord> recs{kernelRecord(1000, 2000, k), kernelRecord(3000, 4000, k + 7)};
  auto r = store->ingest(recs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "ingest: record 1 names id " + std::to_string(k + 7) + ", which internName never returned");
  auto s = store->summary(5);
  REQUIRE(s.ok());
  CHECK(s->records == 0);
}

TEST_CASE("create never writes over a file; open refuses what is not a store") {
  TempDir dir;
  writeFile(dir.file("x.json"), "{}");
  auto c = Store::create(dir.file("x.json"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().message.find("already there") != std::string::npos);
  CHECK(readFile(dir.file("x.json")) == "{}");
  auto o = Store::open(dir.file("x.json"));
  REQUIRE_FALSE(o.ok());
  CHECK(o.error().message.find(dir.file("x.json")) != std::string::npos);
  auto missing = Store::open(dir.file("nope.strata"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("no such file") != std::string::npos);
}

TEST_CASE("a store opened read-only answers queries and refuses writes") {
  TempDir dir;
  std::string path = dir.file("ro.strata");
  {
    auto s = newStore(dir, "ro.strata");
    std::uint32_t k = s->internName("k");
    std::vector<GpuRecord> recs{kernelRecord(10'000, 20'000, k)};
    REQUIRE(s->ingest(recs).ok());
  }
  auto s = Store::open(path, StoreOptions{.readOnly = true});
  REQUIRE(s.ok());
  std::vector<GpuRecord> recs{kernelRecord(30'000, 40'000, 1)};
  auto r = (*s)->ingest(recs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == store_errors::kReadOnly);
  auto sum = (*s)->summary(3);
  REQUIRE(sum.ok());
  CHECK(sum->kernels.at(0).count == 1);
}

TEST_CASE("launch sites, device properties and the launching call come back with a kernel") {
  TempDir dir;
  auto store = newStore(dir);
  LaunchSite site;
  site.id = 3;
  site.pid = 4242;
  site.python = {{"forward", "/work/model.py", 17}, {"train", "/work/train.py", 90}};
  site.native = {0x401000, 0x402000};
  REQUIRE(store->addLaunchSite(site).ok());
  std::uint32_t launch = store->internName("cudaLaunchKernel");
  std::uint32_t op = store->internName("aten::mm");
  std::uint32_t k = store->internName("_Z6kernelv");
  std::vector<GpuRecord> recs;
  GpuRecord cpuOp = apiRecord(1'000'000, 1'090'000, op, 4242, 4243, 0, RecordKind::CpuOp);
  cpuOp.externalId = 55;
  GpuRecord api = apiRecord(1'010'000, 1'020'000, launch, 4242, 4243, 901);
  api.externalId = 55;
  GpuRecord kern = kernelRecord(1'050'000, 1'080'000, k, 7, 0, 901);
  kern.pid = 4242;
  kern.site = 3;
  kern.block[0] = 128;
  recs = {cpuOp, api, kern};
  REQUIRE(store->ingest(recs).ok());
  auto tl = store->timeline(1'000'000, 1'100'000, 100);
  REQUIRE(tl.ok());
  std::uint64_t kid = 0;
  for (auto& i : tl->items) {
    if (i.kind == RecordKind::Kernel) kid = i.id;
  }
  REQUIRE(kid != 0);
  auto d = store->kernel(kid);
  REQUIRE(d.ok());
  CHECK(d->name == "kernel()");
  CHECK(d->mangledName == "_Z6kernelv");
  CHECK(d->durationNs == 30'000);
  CHECK(d->siteKnown);
  REQUIRE(d->python.size() == 2);
  CHECK(d->python[0].file == "/work/model.py");
  CHECK(d->python[0].line == 17);
  CHECK(d->native == std::vector<std::uint64_t>{0x401000, 0x402000});
  REQUIRE(d->launch);
  CHECK(d->launch->name == "cudaLaunchKernel");
  CHECK(d->launch->tid == 4243);
  REQUIRE(d->op);
  CHECK(d->op->name == "aten::mm");
  CHECK_FALSE(d->occupancy);
  CHECK(d->occupancyNote.find("device 0's properties are unknown") != std::string::npos);
  auto j = toJson(*d);
  CHECK(j.at("pythonFrames").as_array().size() == 2);
  CHECK(j.at("block").as_array().at(0).as_int64() == 128);

  auto missing = store->kernel(kid + 5000);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().id == store_errors::kNotFound);
  CHECK(d->nativeFrames.empty());  // the site named no modules

  // Native frames the collector resolved (module, address in it, symbol) come back with them,
  // and a store imported into another keeps them.
  site.nativeFrames = {{0x401000, 0x1000, "/usr/lib/libcudart.so.13", "cudaLaunchKernel"},
                       {0x402000, 0x2000, "/work/app", "main"}};
  REQUIRE(store->addLaunchSite(site).ok());
  auto again = store->kernel(kid);
  REQUIRE(again.ok());
  REQUIRE(again->nativeFrames.size() == 2);
  CHECK(again->nativeFrames[0].module == "/usr/lib/libcudart.so.13");
  CHECK(again->nativeFrames[0].symbol == "cudaLaunchKernel");
  CHECK(again->nativeFrames[1].elfAddress == 0x2000);
  CHECK(again->nativeFrames[1].pc == 0x402000);
  // A profile request's answers: the launch measured (joined by pid and correlation), and a
  // refusal tied to no launch.
  CHECK_FALSE(again->metrics);
  KernelMetrics measured;
  measured.pid = again->record.pid;
  measured.correlation = again->record.correlation;
  measured.kernel = "_Z4gemmPfS_S_i";
  measured.request = 2;
  measured.passes = 8;
  measured.smThroughputPct = 40.5;
  measured.achievedOccupancyPct = 30;
  measured.durationNs = 5000;
  REQUIRE(store->addKernelMetrics(measured).ok());
  KernelMetrics refused;
  refused.pid = measured.pid;
  refused.error = "no hardware metrics in process 1: restricted; tracing goes on";
  refused.result = 35;
  REQUIRE(store->addKernelMetrics(refused).ok());
  auto withMetrics = store->kernel(kid);
  REQUIRE(withMetrics.ok());
  REQUIRE(withMetrics->metrics);
  CHECK(withMetrics->metrics->smThroughputPct == 40.5);
  CHECK_FALSE(withMetrics->metrics->dramThroughputPct);
  CHECK(withMetrics->metrics->error.empty());
  auto mj = toJson(*withMetrics).as_object();
  CHECK(mj.at("metrics").as_object().at("achievedOccupancyPct").as_double() == 30);
  CHECK_FALSE(mj.at("metrics").as_object().contains("dramThroughputPct"));
  CHECK_FALSE(mj.contains("metricsError"));
  REQUIRE(store->close().ok());
  auto merged = newStore(dir, "merged.strata");
  REQUIRE(importStore(dir.file("s.strata"), *merged).ok());
  auto mtl = merged->timeline(1'000'000, 1'100'000, 100);
  REQUIRE(mtl.ok());
  std::uint64_t mid = 0;
  for (auto& i : mtl->items)
    if (i.kind == RecordKind::Kernel) mid = i.id;
  auto m = merged->kernel(mid);
  REQUIRE(m.ok());
  REQUIRE(m->nativeFrames.size() == 2);
  CHECK(m->nativeFrames[1].module == "/work/app");
  CHECK(m->nativeFrames[1].pc == 0x402000);
  CHECK(m->python.size() == 2);
  // The measured metrics come along, and so does the refusal.
  REQUIRE(m->metrics);
  CHECK(m->metrics->passes == 8);
  CHECK(m->metrics->durationNs == 5000.0);
  auto rows = merged->kernelMetrics();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[1].error == refused.error);
  CHECK((*rows)[1].result == 35);
  CHECK((*rows)[1].correlation == 0);
}

TEST_CASE("atomically: a failure leaves nothing behind, and the store goes on") {
  TempDir dir;
  auto store = newStore(dir);
  std::uint32_t k = store->internName("kept");
  std::vector<GpuRecord> first{kernelRecord(1000, 2000, k)};
  REQUIRE(store->ingest(first).ok());
  auto r = store->atomically([&]() -> strata::Result<void> {
    std::uint32_t lost = store->internName("lost");
    std::vector<GpuRecord> recs;
    for (int i = 0; i < 5000; ++i) recs.push_back(kernelRecord(10'000 + static_cast<std::uint64_t>(i) * 100, 10'050 + static_cast<std::uint64_t>(i) * 100, lost, 9));
    if (auto x = store->ingest(recs); !x) return x;
    return strata::Error{strata::errors::kInternal, "stop here", true};
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "stop here");
  auto s = store->summary(10);
  REQUIRE(s.ok());
  CHECK(s->records == 1);
  REQUIRE(s->kernels.size() == 1);
  CHECK(s->kernels[0].name == "kept");
  CHECK(s->streams.size() == 1);
  auto names = store->sql("SELECT count(*) FROM strings", 5);
  REQUIRE(names.ok());
  CHECK(std::get<std::int64_t>(names->rows[0][0]) == 1);
  // Later writes reuse what was rolled back, consistently.
  std::uint32_t again = store->internName("again");
  std::vector<GpuRecord> more{kernelRecord(3000, 4000, again, 9)};
  REQUIRE(store->ingest(more).ok());
  s = store->summary(10);
  REQUIRE(s.ok());
  CHECK(s->records == 2);
  CHECK(s->kernels.size() == 2);
}
