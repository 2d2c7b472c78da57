// Estimated occupancy against values worked out by hand from each GPU's limits (registers are
// allocated per warp, 256 at a time, from four 16K-register partitions per SM; shared memory
// per block includes what the driver reserves). Run by the gpu_occupancy ctest entry only.
#include <doctest/doctest.h>

#include "helpers.hpp"
#include "strata/cuda/occupancy.hpp"
#include "strata/cuda/store_json.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;

namespace {

DeviceProperties h100() {
  return DeviceProperties{.device = 0, .name = "H100", .computeMajor = 9, .computeMinor = 0, .smCount = 132,
                          .maxThreadsPerBlock = 1024, .maxThreadsPerMultiprocessor = 2048, .regsPerBlock = 65536,
                          .regsPerMultiprocessor = 65536, .warpSize = 32, .sharedMemPerBlock = 49152,
                          .sharedMemPerMultiprocessor = 233472, .sharedMemPerBlockOptin = 232448,
                          .reservedSharedMemPerBlock = 1024};
}

Occupancy estimate(const DeviceProperties& d, int threads, int regs, std::uint64_t dynamicShared = 0) {
  auto o = estimateOccupancy(d, LaunchShape{.blockThreads = threads, .registersPerThread = regs, .dynamicSharedMemory = dynamicShared});
  REQUIRE_MESSAGE(o.ok(), (o.ok() ? "" : o.error().message));
  return *o;
}

}  // namespace

TEST_CASE("occupancy: H100 launch shapes worked out by hand") {
  REQUIRE(occupancyAvailable());
  // 128 threads = 4 warps; 32 regs -> 1024 per warp, 4096 per block: 16 blocks by registers
  // (4 partitions x 16384 / 1024 = 64 warps), 16 by warps (64 / 4): 64 warps of 64, 100 %.
  Occupancy a = estimate(h100(), 128, 32);
  CHECK(a.activeBlocksPerSm == 16);
  CHECK(a.activeWarpsPerSm == 64);
  CHECK(a.maxWarpsPerSm == 64);
  CHECK(a.occupancy == doctest::Approx(1.0));
  CHECK(a.limitedBy == std::vector<std::string>{"warps", "registers"});

  // 256 threads = 8 warps; 64 regs -> 2048 per warp: 16384 / 2048 = 8 warps per partition,
  // 32 per SM = 4 blocks: 32 warps, 50 %, registers.
  Occupancy b = estimate(h100(), 256, 64);
  CHECK(b.activeBlocksPerSm == 4);
  CHECK(b.activeWarpsPerSm == 32);
  CHECK(b.occupancy == doctest::Approx(0.5));
  CHECK(b.limitedBy == std::vector<std::string>{"registers"});

  // 48 KiB dynamic shared memory + 1 KiB reserved = 50176 B per block; 233472 / 50176 = 4.65:
  // 4 blocks of 4 warps = 16 warps, 25 %, shared memory.
  Occupancy c = estimate(h100(), 128, 32, 49152);
  CHECK(c.activeBlocksPerSm == 4);
  CHECK(c.activeWarpsPerSm == 16);
  CHECK(c.occupancy == doctest::Approx(0.25));
  CHECK(c.allocatedSharedMemPerBlock == 50176);
  CHECK(c.limitedBy == std::vector<std::string>{"shared memory"});

  // 96 threads = 3 warps; 40 regs -> 1280 per warp: 16384 / 1280 = 12 warps per partition,
  // 48 per SM = 16 blocks: 48 warps, 75 %, registers.
  Occupancy g = estimate(h100(), 96, 40);
  CHECK(g.activeBlocksPerSm == 16);
  CHECK(g.activeWarpsPerSm == 48);
  CHECK(g.occupancy == doctest::Approx(0.75));

  // 1024 threads at 128 regs need 131072 registers: more than an SM has; cannot run.
  Occupancy d = estimate(h100(), 1024, 128);
  CHECK(d.activeBlocksPerSm == 0);
  CHECK(d.occupancy == 0);
  CHECK(d.limitedBy == std::vector<std::string>{"registers"});
}

TEST_CASE("occupancy: the block limit of A100 and T4") {
  REQUIRE(occupancyAvailable());
  DeviceProperties a100 = h100();
  a100.computeMajor = 8;
  a100.sharedMemPerMultiprocessor = 167936;
  a100.sharedMemPerBlockOptin = 166912;
  // 64 threads = 2 warps, 16 regs: 32 blocks per SM at most (sm_80): 64 warps, 100 %.
  Occupancy a = estimate(a100, 64, 16);
  CHECK(a.activeBlocksPerSm == 32);
  CHECK(a.occupancy == doctest::Approx(1.0));
  CHECK(a.limitedBy == std::vector<std::string>{"warps", "blocks"});

  DeviceProperties t4 = h100();
  t4.computeMajor = 7;
  t4.computeMinor = 5;
  t4.maxThreadsPerMultiprocessor = 1024;
  t4.sharedMemPerMultiprocessor = 65536;
  t4.sharedMemPerBlockOptin = 65536;
  t4.reservedSharedMemPerBlock = 0;
  // One-warp blocks on sm_75: 16 blocks per SM at most, 16 of 32 warps, 50 %.
  Occupancy t = estimate(t4, 32, 32);
  CHECK(t.activeBlocksPerSm == 16);
  CHECK(t.maxWarpsPerSm == 32);
  CHECK(t.occupancy == doctest::Approx(0.5));
  CHECK(t.limitedBy == std::vector<std::string>{"blocks"});
  CHECK(toJson(t).at("limitedBy").as_array().at(0).as_string() == "blocks");
}

TEST_CASE("occupancy: what is missing is named") {
  REQUIRE(occupancyAvailable());
  DeviceProperties partial = h100();
  partial.regsPerMultiprocessor = 0;
  partial.warpSize = 0;
  auto r = estimateOccupancy(partial, LaunchShape{.blockThreads = 128, .registersPerThread = 32});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("regsPerMultiprocessor, warpSize") != std::string::npos);
  DeviceProperties future = h100();
  future.computeMajor = 99;
  auto f = estimateOccupancy(future, LaunchShape{.blockThreads = 128, .registersPerThread = 32});
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("compute capability 99.0") != std::string::npos);
  auto z = estimateOccupancy(h100(), LaunchShape{});
  REQUIRE_FALSE(z.ok());
  CHECK(z.error().message.find("no block size") != std::string::npos);
}

TEST_CASE("occupancy: gpuKernel estimates from the record and the stored device properties") {
  REQUIRE(occupancyAvailable());
  TempDir dir;
  auto store = newStore(dir);
  REQUIRE(store->setDeviceProperties(h100()).ok());
  GpuRecord k = kernelRecord(1000, 9000, store->internName("k"));
  k.block[0] = 256;
  k.registersPerThread = 64;
  GpuRecord other = kernelRecord(10'000, 19'000, store->internName("k2"), 7, /*device=*/3);
  std::vector<GpuRecord> recs{k, other};
  REQUIRE(store->ingest(recs).ok());
  auto tl = store->timeline(0, 20'000, 10);
  REQUIRE(tl.ok());
  REQUIRE(tl->items.size() == 2);
  auto d = store->kernel(tl->items[0].id);
  REQUIRE(d.ok());
  REQUIRE(d->occupancy);
  CHECK(d->occupancy->activeWarpsPerSm == 32);
  CHECK(d->occupancy->occupancy == doctest::Approx(0.5));
  auto unknown = store->kernel(tl->items[1].id);
  REQUIRE(unknown.ok());
  CHECK_FALSE(unknown->occupancy);
  CHECK(unknown->occupancyNote == "no occupancy estimate: device 3's properties are unknown (not recorded by the collector or the imported trace)");
  CHECK(toJson(*unknown).at("occupancyUnavailable").as_string() == unknown->occupancyNote);
}
