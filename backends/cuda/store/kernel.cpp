// gpuKernel: one record in full, its estimated occupancy, the launch site that made it, and
// the API call and framework op it joins with (by correlation and external id).
#include <algorithm>
#include <charconv>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

// How far back a launch is looked for: chunks of a CPU thread scanned back from the kernel's
// start (a launch may precede its kernel by as much as the GPU's queue is long).
constexpr int kJoinChunks = 64;
// What the join compares and what it shows.
constexpr codec::ColumnMask kJoinColumns = codec::kTimeColumns | codec::bit(codec::kCorrelation) |
                                           codec::bit(codec::kExternalId) | codec::bit(codec::kPid) |
                                           codec::bit(codec::kTid);

bool gpuSide(RecordKind k) {
  return k == RecordKind::Kernel || k == RecordKind::Memcpy || k == RecordKind::Memset ||
         k == RecordKind::Synchronization || k == RecordKind::GraphLaunch;
}

// A torch.profiler python_function event's name, "FILE(LINE): FUNCTION", as a frame.
std::optional<PythonFrame> pythonFunction(std::string_view name) {
  auto colon = name.find("): ");
  if (colon == std::string_view::npos) return std::nullopt;
  auto open = name.rfind('(', colon);
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  int line = 0;
  auto [end, ec] = std::from_chars(name.data() + open + 1, name.data() + colon, line);
  if (ec != std::errc() || end != name.data() + colon || line <= 0) return std::nullopt;
  return PythonFrame{std::string(name.substr(colon + 3)), std::string(name.substr(0, open)), line};
}

}  // namespace

Result<RecordDetail> Store::kernel(std::uint64_t id) {
  if (auto r = flush(); !r) return r.takeError();
  Impl& m = *impl_;
  std::vector<GpuRecord> recs;
  auto notFound = Error{kNotFound, "gpuKernel: no GPU record with id " + std::to_string(id), true};
  auto rc = m.readChunk(static_cast<std::int64_t>(codec::chunkOf(id)), codec::kAllColumns, recs);
  if (!rc) return rc.error().id == kNotFound ? notFound : rc.takeError();
  if (codec::indexOf(id) >= recs.size()) return notFound;
  const GpuRecord r = recs[codec::indexOf(id)];
  RecordDetail d;
  d.id = id;
  d.record = r;
  d.name = m.nameText(r.name);
  d.mangledName = d.name;
  if (r.name) {
    m.st.selStringById.bind(1, r.name);
    if (m.st.selStringById.step() == SQLITE_ROW) d.mangledName = std::string(m.st.selStringById.text(0));
    m.st.selStringById.reset();
  }
  d.durationNs = isTimed(r) ? effectiveEnd(r) - r.start : 0;

  if (gpuSide(r.kind)) {
    if (auto it = m.devices.find(r.device); it != m.devices.end()) d.device = it->second;
  }
  if (r.kind == RecordKind::Kernel) {
    if (!d.device) {
      d.occupancyNote = "no occupancy estimate: device " + std::to_string(r.device) +
                        "'s properties are unknown (not recorded by the collector or the imported trace)";
    } else {
      LaunchShape shape{.blockThreads = r.block[0] * std::max(r.block[1], 1) * std::max(r.block[2], 1),
                        .registersPerThread = static_cast<int>(r.registersPerThread),
                        .staticSharedMemory = r.staticSharedMemory,
                        .dynamicSharedMemory = r.dynamicSharedMemory};
      auto o = estimateOccupancy(*d.device, shape);
      if (o) d.occupancy = *o;
      else d.occupancyNote = o.error().message;
    }
    d.metrics = m.launchMetrics(r.pid, r.correlation);
  }

  if (r.site) {
    SiteFrames own = m.siteFrames(r.pid, r.site);
    d.siteKnown = own.known;
    d.attribution = own.attribution;
    d.callerTid = own.callerTid;
    d.waitedIn = std::move(own.waitedIn);
    d.python = std::move(own.python);
    d.native = std::move(own.native);
    d.nativeFrames = std::move(own.nativeFrames);
  }
  if (r.graphNodeId && m.graphNodes) {
    auto q = sql::Stmt::prepare(m.db, "SELECT site,origin FROM graph_nodes WHERE pid=? AND node=?", kIo, false);
    if (q) {
      q->bind(1, r.pid).bindU(2, r.graphNodeId);
      if (q->step() == SQLITE_ROW) {
        GraphCapture c;
        c.node = r.graphNodeId;
        c.origin = std::string(q->text(1));
        c.site = m.siteFrames(r.pid, static_cast<std::uint32_t>(q->i64(0)));
        if (c.site.known) d.capture = std::move(c);
      }
    }
  }

  // The launching call: same correlation (and process, when known) on a CPU thread, started
  // before the kernel. Then the framework op with the same external id on that thread.
  if (gpuSide(r.kind) && isTimed(r) && (r.correlation || r.externalId)) {
    auto q = sql::Stmt::prepare(m.db, "SELECT id,data FROM chunks WHERE track=? AND start_ns<=? ORDER BY start_ns DESC LIMIT ?", kIo, false);
    if (!q) return q.takeError();
    std::uint64_t externalId = r.externalId;
    auto related = [&](const GpuRecord& x, std::uint64_t xid) {
      return RelatedRecord{.id = xid, .kind = x.kind, .name = m.nameText(x.name), .pid = x.pid, .tid = x.tid,
                           .startNs = x.start, .endNs = effectiveEnd(x)};
    };
    std::vector<GpuRecord> cand;
    for (int pass = 0; pass < 2; ++pass) {
      for (const TrackState& t : m.tracks) {
        if (t.info.kind != TrackKind::Cpu || (r.pid && t.info.pid && t.info.pid != r.pid)) continue;
        if (pass == 0 && !(t.kinds & (kindBit(RecordKind::RuntimeApi) | kindBit(RecordKind::DriverApi)))) continue;
        if (pass == 1 && (!(t.kinds & kindBit(RecordKind::CpuOp)) || (d.launch && d.launch->tid != t.info.tid))) continue;
        q->bind(1, t.info.id).bindU(2, r.start).bind(3, kJoinChunks);
        while (q->step() == SQLITE_ROW) {
          if (!codec::decode(q->blob(1), kJoinColumns, cand)) continue;
          std::uint64_t chunk = q->u64(0);
          for (std::uint32_t i = 0; i < cand.size(); ++i) {
            const GpuRecord& x = cand[i];
            if (pass == 0 && r.correlation && x.correlation == r.correlation &&
                (x.kind == RecordKind::RuntimeApi || x.kind == RecordKind::DriverApi) && x.start <= r.start) {
              d.launch = related(x, codec::recordId(chunk, i));
              if (!externalId) externalId = x.externalId;
            }
            if (pass == 1 && x.kind == RecordKind::CpuOp && externalId && x.externalId == externalId &&
                x.start <= (d.launch ? d.launch->startNs : r.start) && (!d.op || x.start > d.op->startNs)) {
              d.op = related(x, codec::recordId(chunk, i));
            }
          }
          if ((pass == 0 && d.launch) || (pass == 1 && d.op)) break;
        }
        q->reset();
        if ((pass == 0 && d.launch) || (pass == 1 && d.op)) break;
      }
      if (pass == 0 && !externalId) break;
    }
  }

  // No launch site recorded (a torch.profiler trace): the Python frames are the python_function
  // events (with_stack=True) running on the launching thread when the launch call began.
  if (d.python.empty() && d.launch) {
    auto around = timeline(d.launch->startNs, d.launch->startNs + 1, 4096);
    if (around && around->level < 0) {
      std::vector<const TimelineItem*> enclosing;
      for (const TimelineItem& i : around->items) {
        if (i.kind != RecordKind::CpuOp) continue;
        auto t = std::find_if(around->tracks.begin(), around->tracks.end(), [&](const Track& x) { return x.id == i.track; });
        if (t != around->tracks.end() && t->tid == d.launch->tid && (!d.launch->pid || t->pid == d.launch->pid))
          enclosing.push_back(&i);
      }
      // Innermost first: the latest start (the shorter on equal starts).
      std::sort(enclosing.begin(), enclosing.end(), [](const TimelineItem* a, const TimelineItem* b) {
        return a->startNs != b->startNs ? a->startNs > b->startNs : a->endNs < b->endNs;
      });
      for (const TimelineItem* i : enclosing)
        if (auto f = pythonFunction(i->name)) d.python.push_back(std::move(*f));
    }
  }
  return d;
}

}  // namespace strata::cuda
