// CUPTI-shaped activity buffers (the CUDA 13.0 record structs, filled here) read through the
// real libcupti's cuptiActivityGetNextRecord, then through the collector's buffer callback into
// the ring and out of the reader: every field checked on the way.
#include <cupti.h>
#include <doctest/doctest.h>

#include <cstring>

#include "activity_parser.hpp"
#include "collector.hpp"
#include "support.hpp"

using namespace strata::cuda;
using namespace strata::cuda::collector;
using namespace strata::cuda::test;
using What = ParsedActivity::What;

namespace {

// Appends CUPTI records back to back, as CUPTI lays them out in a buffer.
class BufferBuilder {
 public:
  template <class T>
  T& add(CUpti_ActivityKind kind) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    T* r = reinterpret_cast<T*>(bytes_.data() + at);
    std::memset(r, 0, sizeof(T));
    r->kind = kind;
    offsets_.push_back(at);
    return *r;
  }
  // Pointers handed out by add() stay valid only until the next add(): fill each at once.
  std::size_t size() const { return bytes_.size(); }
  void copyTo(std::uint8_t* out) const { std::memcpy(out, bytes_.data(), bytes_.size()); }

 private:
  std::vector<std::uint8_t> bytes_;
  std::vector<std::size_t> offsets_;
};

const char* kKernelName = "_Z9vectorAddPKfS0_Pfi";

void fillAll(BufferBuilder& b) {
  {
    auto& k = b.add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.start = 1'000'000'100;
    k.end = 1'000'000'900;
    k.deviceId = 1;
    k.contextId = 2;
    k.streamId = 13;
    k.correlationId = 41;
    k.gridX = 4096, k.gridY = 2, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 2048;
    k.graphId = 5;
    k.graphNodeId = 0x100000002ull;
    k.name = kKernelName;
  }
  {
    auto& m = b.add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20;
    m.start = 999'000'000;
    m.end = 999'100'000;
    m.deviceId = 1;
    m.contextId = 2;
    m.streamId = 14;
    m.correlationId = 40;
  }
  {
    auto& m = b.add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    m.bytes = 4096;
    m.start = 1'000'002'000;
    m.end = 1'000'003'000;
    m.deviceId = 1;
    m.contextId = 2;
    m.streamId = 15;
    m.srcDeviceId = 1;
    m.dstDeviceId = 0;
    m.correlationId = 43;
  }
  {
    auto& m = b.add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    m.value = 0;
    m.bytes = 512;
    m.start = 0;  // CUPTI can leave both times 0
    m.end = 0;
    m.deviceId = 1;
    m.contextId = 2;
    m.streamId = 13;
    m.correlationId = 44;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  }
  {
    auto& x = b.add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    x.externalId = 0xabcdef;
    x.correlationId = 41;
  }
  {
    auto& a = b.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = 1'000'000'000;
    a.end = 1'000'000'050;
    a.processId = 321;
    a.threadId = 654;
    a.correlationId = 41;
    a.returnValue = 0;
  }
  {
    auto& a = b.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
    a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    a.start = 1'000'004'000;
    a.end = 1'000'003'500;  // an end before its start: taken as the start
    a.processId = 321;
    a.threadId = 655;
    a.correlationId = 45;
    a.returnValue = 700;
  }
  {
    auto& s = b.add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s.start = 1'000'001'000;
    s.end = 1'000'001'500;
    s.correlationId = 46;
    s.contextId = 2;
    s.streamId = 13;
    s.returnValue = 0;
  }
  {
    auto& m = b.add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    m.timestamp = 998'000'000;
    m.id = 3;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 321;
    m.objectId.pt.threadId = 654;
    m.name = "epoch 1";
    m.domain = "train";
  }
  {
    auto& m = b.add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    m.timestamp = 1'000'010'000;
    m.id = 3;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 321;
    m.objectId.pt.threadId = 654;
  }
  {
    auto& n = b.add<CUpti_ActivityName>(CUPTI_ACTIVITY_KIND_NAME);
    n.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
    n.objectId.dcs.deviceId = 1;
    n.objectId.dcs.contextId = 2;
    n.objectId.dcs.streamId = 13;
    n.name = "compute";
  }
  {
    auto& g = b.add<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    g.correlationId = 47;
    g.start = 1'000'020'000;
    g.end = 1'000'030'000;
    g.deviceId = 1;
    g.graphId = 5;
    g.contextId = 2;
    g.streamId = 16;
  }
  {
    auto& o = b.add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = 321;
    o.objectId.pt.threadId = 999;
    o.start = 1'000'040'000;
    o.end = 1'000'041'000;
  }
  // A kind Strata does not keep: read past, not misread.
  b.add<CUpti_ActivityMarkerData2>(CUPTI_ACTIVITY_KIND_MARKER_DATA);
}

}  // namespace

TEST_CASE("the CUDA 13.0 record layouts are the ones the parser reads") {
  uint32_t version = 0;
  REQUIRE(cuptiGetVersion(&version) == CUPTI_SUCCESS);
  CHECK(version == CUPTI_API_VERSION);
  CHECK(sizeof(CUpti_ActivityKernel10) == 216);
  CHECK(sizeof(CUpti_ActivityMemcpy6) == 96);
  CHECK(sizeof(CUpti_ActivityMemset4) == 88);
  CHECK(sizeof(CUpti_ActivityAPI) == 40);
  CHECK(sizeof(CUpti_ActivitySynchronization2) == 56);
  CHECK(sizeof(CUpti_ActivityExternalCorrelation) == 24);
  CHECK(sizeof(CUpti_ActivityMarker2) == 56);
  CHECK(sizeof(CUpti_ActivityGraphTrace2) == 56);
}

TEST_CASE("every kept kind is read through cuptiActivityGetNextRecord with every field") {
  BufferBuilder b;
  fillAll(b);
  std::vector<std::uint8_t> buf(b.size() + 8);
  b.copyTo(buf.data());
  ApiNames names;
  names.load();
  CHECK(std::string(names.name(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)) ==
        "cudaLaunchKernel");
  CHECK(std::string(names.name(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)) == "cuLaunchKernel");
  std::vector<ParsedActivity> out;
  ParseResult r = parseActivityBuffer(buf.data(), b.size(), names, out);
  CHECK(r.end == CUPTI_ERROR_MAX_LIMIT_REACHED);
  CHECK(r.records == 14);
  CHECK(r.skipped == 1);
  REQUIRE(out.size() == 13);

  const GpuRecord& k = out[0].record;
  CHECK(out[0].what == What::Record);
  CHECK(k.kind == RecordKind::Kernel);
  CHECK(k.start == 1'000'000'100);
  CHECK(k.end == 1'000'000'900);
  CHECK(k.device == 1);
  CHECK(k.context == 2);
  CHECK(k.stream == 13);
  CHECK(k.correlation == 41);
  CHECK(k.grid[0] == 4096);
  CHECK(k.grid[1] == 2);
  CHECK(k.grid[2] == 1);
  CHECK(k.block[0] == 256);
  CHECK(k.block[1] == 1);
  CHECK(k.block[2] == 1);
  CHECK(k.registersPerThread == 32);
  CHECK(k.staticSharedMemory == 1024);
  CHECK(k.dynamicSharedMemory == 2048);
  CHECK(k.graphId == 5);
  CHECK(k.graphNodeId == 0x100000002ull);
  CHECK(std::string(out[0].text) == kKernelName);

  const GpuRecord& m = out[1].record;
  CHECK(m.kind == RecordKind::Memcpy);
  CHECK(m.copyKind == static_cast<std::uint8_t>(CopyKind::HtoD));
  CHECK(m.srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  CHECK(m.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(m.bytes == (1u << 20));
  CHECK(m.start == 999'000'000);
  CHECK(m.end == 999'100'000);
  CHECK(m.stream == 14);
  CHECK(m.correlation == 40);
  CHECK(out[1].text == nullptr);

  const GpuRecord& p = out[2].record;
  CHECK(p.kind == RecordKind::Memcpy);
  CHECK(p.copyKind == static_cast<std::uint8_t>(CopyKind::PtoP));
  CHECK(p.bytes == 4096);
  CHECK(p.stream == 15);
  CHECK(p.correlation == 43);

  const GpuRecord& s = out[3].record;
  CHECK(s.kind == RecordKind::Memset);
  CHECK(s.bytes == 512);
  CHECK(s.start == 0);
  CHECK(s.end == 0);
  CHECK(s.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(s.correlation == 44);

  CHECK(out[4].what == What::ExternalCorrelation);
  CHECK(out[4].record.correlation == 41);
  CHECK(out[4].record.externalId == 0xabcdef);

  const GpuRecord& rt = out[5].record;
  CHECK(rt.kind == RecordKind::RuntimeApi);
  CHECK(rt.pid == 321);
  CHECK(rt.tid == 654);
  CHECK(rt.correlation == 41);
  CHECK(rt.result == 0);
  CHECK(rt.start == 1'000'000'000);
  CHECK(rt.end == 1'000'000'050);
  CHECK(std::string(out[5].text) == "cudaLaunchKernel");

  const GpuRecord& dr = out[6].record;
  CHECK(dr.kind == RecordKind::DriverApi);
  CHECK(dr.tid == 655);
  CHECK(dr.result == 700);
  CHECK(dr.start == 1'000'004'000);
  CHECK(dr.end == 1'000'004'000);
  CHECK(std::string(out[6].text) == "cuLaunchKernel");

  const GpuRecord& sy = out[7].record;
  CHECK(sy.kind == RecordKind::Synchronization);
  CHECK(sy.copyKind == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  CHECK(sy.correlation == 46);
  CHECK(sy.context == 2);
  CHECK(sy.stream == 13);
  CHECK(sy.start == 1'000'001'000);
  CHECK(sy.end == 1'000'001'500);

  CHECK(out[8].what == What::MarkerStart);
  CHECK(out[8].markerId == 3);
  CHECK(out[8].record.start == 998'000'000);
  CHECK(out[8].record.pid == 321);
  CHECK(out[8].record.tid == 654);
  CHECK(std::string(out[8].text) == "epoch 1");
  CHECK(out[9].what == What::MarkerEnd);
  CHECK(out[9].markerId == 3);
  CHECK(out[9].record.start == 1'000'010'000);

  CHECK(out[10].what == What::ObjectName);
  CHECK(out[10].objectKind == CUPTI_ACTIVITY_OBJECT_STREAM);
  CHECK(out[10].objectIds[0] == 1);
  CHECK(out[10].objectIds[1] == 2);
  CHECK(out[10].objectIds[2] == 13);
  CHECK(std::string(out[10].text) == "compute");

  const GpuRecord& g = out[11].record;
  CHECK(g.kind == RecordKind::GraphLaunch);
  CHECK(g.correlation == 47);
  CHECK(g.graphId == 5);
  CHECK(g.device == 1);
  CHECK(g.context == 2);
  CHECK(g.stream == 16);
  CHECK(g.start == 1'000'020'000);
  CHECK(g.end == 1'000'030'000);

  const GpuRecord& o = out[12].record;
  CHECK(o.kind == RecordKind::Overhead);
  CHECK(o.tid == 999);
  CHECK(std::string(out[12].text) == "CUPTI buffer flush");
}

TEST_CASE("a buffer goes from CUPTI's callback through the ring to the reader as GpuRecords") {
  ScratchDir dir;
  Collector c;
  Config config;
  config.dir = dir.path();
  config.session = "parse";
  config.mode = ring::Mode::Trace;
  REQUIRE(c.runWithoutCupti(config).ok());

  BufferBuilder b;
  fillAll(b);
  // The buffer comes from the collector, as CUPTI would get it; the collector takes it back.
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0, maxRecords = 0;
  c.onBufferRequested(&buffer, &size, &maxRecords);
  REQUIRE(buffer != nullptr);
  CHECK(size == config.bufferBytes);
  CHECK(reinterpret_cast<std::uintptr_t>(buffer) % 8 == 0);
  b.copyTo(buffer);
  c.onBufferCompleted(nullptr, 0, buffer, size, b.size());

  SessionReader reader(dir.path(), "parse");
  Batch batch;
  REQUIRE(reader.poll(batch).ok());
  // 13 entries: the external correlation joins instead of being a record, the two marker
  // halves make one range, the stream name is a name.
  REQUIRE(batch.records.size() == 10);
  const GpuRecord& k = batch.records[0];
  CHECK(reader.string(k.name) == kKernelName);
  // CUPTI writes an external correlation record before its API record, and kernels come later;
  // here the kernel comes first, so only what follows the external record is joined.
  CHECK(k.externalId == 0);
  CHECK(k.pid == static_cast<std::uint32_t>(getpid()));
  const GpuRecord& api = batch.records[4];
  CHECK(api.kind == RecordKind::RuntimeApi);
  CHECK(api.externalId == 0xabcdef);
  CHECK(reader.string(api.name) == "cudaLaunchKernel");
  CHECK(api.pid == 321);
  const GpuRecord& sync = batch.records[6];
  CHECK(sync.kind == RecordKind::Synchronization);
  CHECK(sync.device == 1);  // from the kernel seen on the same context
  const GpuRecord& range = batch.records[7];
  CHECK(range.kind == RecordKind::Marker);
  CHECK(reader.string(range.name) == "epoch 1");
  CHECK(range.start == 998'000'000);
  CHECK(range.end == 1'000'010'000);
  REQUIRE(batch.names.size() == 1);
  CHECK(batch.names[0].name == "compute");
  CHECK(batch.names[0].ids[2] == 13);
  CHECK(batch.records[8].kind == RecordKind::GraphLaunch);
  CHECK(batch.records[9].kind == RecordKind::Overhead);
  auto procs = reader.processes();
  REQUIRE(procs.size() == 1);
  CHECK(procs[0].recordsWritten == 10);
  CHECK(procs[0].droppedRecords == 0);
}

TEST_CASE("the buffer bound makes CUPTI drop rather than grow") {
  ScratchDir dir;
  Collector c;
  Config config;
  config.dir = dir.path();
  config.bufferBytes = 1 << 20;
  config.bufferTotalBytes = 3 << 20;
  REQUIRE(c.runWithoutCupti(config).ok());
  std::vector<std::uint8_t*> held;
  for (int i = 0; i < 4; ++i) {
    std::uint8_t* buffer = nullptr;
    std::size_t size = 0, maxRecords = 0;
    c.onBufferRequested(&buffer, &size, &maxRecords);
    if (i < 3) {
      REQUIRE(buffer != nullptr);
      held.push_back(buffer);
    } else {
      CHECK(buffer == nullptr);
      CHECK(size == 0);
    }
  }
  c.onBufferCompleted(nullptr, 0, held.back(), 1 << 20, 0);
  held.pop_back();
  std::uint8_t* again = nullptr;
  std::size_t size = 0, maxRecords = 0;
  c.onBufferRequested(&again, &size, &maxRecords);
  CHECK(again != nullptr);
  held.push_back(again);
  for (auto* h : held) c.onBufferCompleted(nullptr, 0, h, 1 << 20, 0);
}
