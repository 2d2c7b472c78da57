// CUPTI activity records (CUDA 13.0 layouts) to ParsedActivity.
#include "activity_parser.hpp"

#include "sticky_errors.hpp"

namespace strata::cuda::collector {
namespace {

void times(GpuRecord& r, std::uint64_t start, std::uint64_t end) {
  r.start = start;
  r.end = end != 0 && end < start ? start : end;
}

const char* overheadName(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity buffer request";
    default: return "CUPTI overhead";
  }
}

// Which half of an activity's object id is valid: process and thread, or device, context and
// stream.
bool byProcessOrThread(CUpti_ActivityObjectKind kind) {
  return kind == CUPTI_ACTIVITY_OBJECT_PROCESS || kind == CUPTI_ACTIVITY_OBJECT_THREAD;
}

// Work on a device stream (kernel, copy, memset, graph launch): the fields all of them carry.
template <class Work>
void streamRecord(GpuRecord& r, RecordKind kind, const Work* w) {
  r.kind = kind;
  times(r, w->start, w->end);
  r.device = w->deviceId;
  r.context = w->contextId;
  r.stream = w->streamId;
  r.correlation = w->correlationId;
}

// The same for work that may be a node of a launched graph (kernel, copy, memset).
template <class Work>
void graphNodeRecord(GpuRecord& r, RecordKind kind, const Work* w) {
  streamRecord(r, kind, w);
  r.graphId = w->graphId;
  r.graphNodeId = w->graphNodeId;
}

// A copy, host/device (Memcpy6) or peer to peer (MemcpyPtoP4): the fields both carry.
template <class Copy>
void copyRecord(GpuRecord& r, const Copy* m) {
  graphNodeRecord(r, RecordKind::Memcpy, m);
  r.copyKind = m->copyKind;
  r.srcKind = m->srcKind;
  r.dstKind = m->dstKind;
  r.bytes = m->bytes;
}

void parseOne(const CUpti_Activity* a, const ApiNames& names, ParsedActivity& p) {
  using What = ParsedActivity::What;
  GpuRecord& r = p.record;
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      p.what = What::Record;
      graphNodeRecord(r, RecordKind::Kernel, k);
      r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
      r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
      r.registersPerThread = k->registersPerThread;
      r.staticSharedMemory = static_cast<std::uint32_t>(k->staticSharedMemory);
      r.dynamicSharedMemory = static_cast<std::uint32_t>(k->dynamicSharedMemory);
      p.text = k->name;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      p.what = What::Record;
      copyRecord(r, reinterpret_cast<const CUpti_ActivityMemcpy6*>(a));
      return;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      p.what = What::Record;
      copyRecord(r, reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(a));
      return;
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
      p.what = What::Record;
      graphNodeRecord(r, RecordKind::Memset, m);
      r.dstKind = static_cast<std::uint8_t>(m->memoryKind);
      r.bytes = m->bytes;
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(a);
      const bool runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      p.what = What::Record;
      r.kind = runtime ? RecordKind::RuntimeApi : RecordKind::DriverApi;
      times(r, api->start, api->end);
      r.pid = api->processId;
      r.tid = api->threadId;
      r.correlation = api->correlationId;
      r.result = static_cast<std::int32_t>(api->returnValue);
      p.text = names.name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, api->cbid);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(a);
      p.what = What::Record;
      r.kind = RecordKind::Synchronization;
      r.copyKind = static_cast<std::uint8_t>(s->type);
      times(r, s->start, s->end);
      r.correlation = s->correlationId;
      r.context = s->contextId;
      r.stream = s->streamId;
      r.result = static_cast<std::int32_t>(s->returnValue);
      return;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(a);
      p.what = What::ExternalCorrelation;
      r.correlation = x->correlationId;
      r.externalId = x->externalId;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(a);
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) p.what = What::MarkerInstant;
      else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) p.what = What::MarkerStart;
      else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) p.what = What::MarkerEnd;
      else return;  // sync-object markers: not kept
      r.kind = RecordKind::Marker;
      r.start = r.end = m->timestamp;
      p.markerId = m->id;
      if (byProcessOrThread(m->objectKind)) {
        r.pid = m->objectId.pt.processId;
        r.tid = m->objectId.pt.threadId;
      } else {
        r.device = m->objectId.dcs.deviceId;
        r.context = m->objectId.dcs.contextId;
        r.stream = m->objectId.dcs.streamId;
      }
      p.text = m->name;
      return;
    }
    case CUPTI_ACTIVITY_KIND_NAME: {
      auto* n = reinterpret_cast<const CUpti_ActivityName*>(a);
      p.what = What::ObjectName;
      p.objectKind = static_cast<std::uint32_t>(n->objectKind);
      if (byProcessOrThread(n->objectKind)) {
        p.objectIds[0] = n->objectId.pt.processId;
        p.objectIds[1] = n->objectId.pt.threadId;
      } else {
        p.objectIds[0] = n->objectId.dcs.deviceId;
        p.objectIds[1] = n->objectId.dcs.contextId;
        p.objectIds[2] = n->objectId.dcs.streamId;
      }
      p.text = n->name;
      return;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(a);
      p.what = What::Record;
      streamRecord(r, RecordKind::GraphLaunch, g);
      r.graphId = g->graphId;
      return;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(a);
      p.what = What::Record;
      r.kind = RecordKind::Overhead;
      times(r, o->start, o->end);
      r.correlation = o->correlationId;
      if (byProcessOrThread(o->objectKind)) {
        r.pid = o->objectId.pt.processId;
        r.tid = o->objectId.pt.threadId;
      } else {
        r.device = o->objectId.dcs.deviceId;
      }
      p.text = overheadName(o->overheadKind);
      return;
    }
    default:
      return;
  }
}

}  // namespace

void ApiNames::load() {
  auto fill = [](CUpti_CallbackDomain domain, std::uint32_t count, std::vector<std::string>& out) {
    out.assign(count, std::string());
    for (std::uint32_t cbid = 1; cbid < count; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name) out[cbid] = std::string(apiDisplayName(name));
    }
  };
  fill(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, runtime_);
  fill(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, driver_);
}

const char* ApiNames::name(CUpti_CallbackDomain domain, std::uint32_t cbid) const {
  const auto& table = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_ : driver_;
  return cbid < table.size() && !table[cbid].empty() ? table[cbid].c_str() : nullptr;
}

ParseResult parseActivityBuffer(std::uint8_t* buffer, std::size_t validSize, const ApiNames& names,
                                std::vector<ParsedActivity>& out) {
  ParseResult result;
  CUpti_Activity* record = nullptr;
  for (;;) {
    result.end = cuptiActivityGetNextRecord(buffer, validSize, &record);
    if (result.end != CUPTI_SUCCESS) break;
    ParsedActivity p;
    parseOne(record, names, p);
    ++result.records;
    if (p.what == ParsedActivity::What::Skip) {
      ++result.skipped;
      continue;
    }
    out.push_back(p);
  }
  return result;
}

}  // namespace strata::cuda::collector
