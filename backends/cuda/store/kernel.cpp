// gpuKernel: one record in full, its estimated occupancy, the launch site that made it, and
// the API call and framework op it joins with (by correlation and external id).
#include <algorithm>
#include <charconv>
#include <unordered_map>

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
// How far back a backward op's forward op is looked for: chunks of each CPU thread (a whole
// forward pass may lie between them), and what that scan reads.
constexpr int kForwardChunks = 256;
constexpr codec::ColumnMask kSequenceColumns = codec::kTimeColumns | codec::bit(codec::kReserved) |
                                               codec::bit(codec::kPid) | codec::bit(codec::kTid);

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

// An op autograd's engine ran: a node ("AddmmBackward0", "MyFunctionBackward",
// "torch::autograd::AccumulateGrad") or the engine's own range around one. Its sequence number
// is its forward op's; ops called inside it run with grad mode off and carry none.
bool backwardOpName(std::string_view name) {
  return name.find("Backward") != std::string_view::npos || name.starts_with("autograd::engine::") ||
         name.starts_with("torch::autograd::");
}

// A record a kernel joins with, as gpuKernel names it.
RelatedRecord related(Store::Impl& m, const GpuRecord& x, std::uint64_t id) {
  return RelatedRecord{.id = id, .kind = x.kind, .name = m.nameText(x.name), .pid = x.pid, .tid = x.tid,
                       .startNs = x.start, .endNs = effectiveEnd(x)};
}

// The python_function events among ops (innermost first) as frames, innermost first.
std::vector<PythonFrame> pythonFunctions(const std::vector<TimelineItem>& ops) {
  std::vector<PythonFrame> out;
  for (const TimelineItem& i : ops)
    if (auto f = pythonFunction(i.name)) out.push_back(std::move(*f));
  return out;
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
    sql::Stmt* q = &m.st.selChunksBefore;
    std::uint64_t externalId = r.externalId;
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
              d.launch = related(m, x, codec::recordId(chunk, i));
              if (!externalId) externalId = x.externalId;
            }
            if (pass == 1 && x.kind == RecordKind::CpuOp && externalId && x.externalId == externalId &&
                x.start <= (d.launch ? d.launch->startNs : r.start) && (!d.op || x.start > d.op->startNs)) {
              d.op = related(m, x, codec::recordId(chunk, i));
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

  // No launch site recorded (a torch.profiler trace): the ops running on the launching thread
  // when the launch call began tell the rest.
  if (d.launch && d.python.empty()) {
    auto enclosing = enclosingOps(d.launch->pid, d.launch->tid, d.launch->startNs);
    if (!enclosing) return enclosing.takeError();
    // The Python frames: the python_function events (with_stack=True) among them.
    d.python = pythonFunctions(*enclosing);
    // A backward op's kernel (its thread runs no Python): the forward op autograd paired the
    // backward op with, and that op's Python frames.
    if (d.python.empty()) {
      auto b = backwardOf(*enclosing);
      if (!b) return b.takeError();
      d.backwardOf = std::move(*b);
    }
  }
  return d;
}

Result<std::vector<TimelineItem>> Store::enclosingOps(std::uint32_t pid, std::uint32_t tid, std::uint64_t ns) {
  std::vector<TimelineItem> out;
  auto around = timeline(ns, ns + 1, 4096);
  if (!around) return around.takeError();
  if (around->level >= 0) return out;  // too many to list one by one: none named
  for (TimelineItem& i : around->items) {
    if (i.kind != RecordKind::CpuOp) continue;
    auto t = std::find_if(around->tracks.begin(), around->tracks.end(), [&](const Track& x) { return x.id == i.track; });
    if (t != around->tracks.end() && t->tid == tid && (!pid || t->pid == pid)) out.push_back(std::move(i));
  }
  // Innermost first: the latest start (the shorter on equal starts).
  std::sort(out.begin(), out.end(), [](const TimelineItem& a, const TimelineItem& b) {
    return a.startNs != b.startNs ? a.startNs > b.startNs : a.endNs < b.endNs;
  });
  return out;
}

Result<std::optional<BackwardOf>> Store::backwardOf(const std::vector<TimelineItem>& enclosing) {
  Impl& m = *impl_;
  std::optional<BackwardOf> none;
  // The innermost enclosing backward op with a sequence number (stored + 1 by the importer).
  std::vector<GpuRecord> recs;
  std::optional<RelatedRecord> backward;
  std::uint32_t seq = 0;
  for (const TimelineItem& i : enclosing) {
    if (!backwardOpName(i.name)) continue;
    auto rc = m.readChunk(static_cast<std::int64_t>(codec::chunkOf(i.id)), kSequenceColumns, recs);
    if (!rc) return rc.takeError();
    if (codec::indexOf(i.id) >= recs.size()) continue;
    const GpuRecord& x = recs[codec::indexOf(i.id)];
    if (!x.reserved) continue;
    backward = related(m, x, i.id);
    seq = x.reserved;
    break;
  }
  if (!backward) return none;

  // Its forward op: the latest op outside the engine with the same sequence number, in the same
  // process, before it. Sequence numbers grow with time on the thread that ran the forward, so
  // a thread's scan stops at its first forward op with a smaller one; an outer op that peeked
  // the same number without making the node (aten::linear around aten::t) started earlier.
  sql::Stmt* q = &m.st.selChunksBefore;
  std::unordered_map<std::uint32_t, bool> engineName;  // name id -> backwardOpName
  auto inEngine = [&](std::uint32_t name) {
    auto [it, fresh] = engineName.try_emplace(name, false);
    if (fresh) it->second = backwardOpName(m.nameText(name));
    return it->second;
  };
  std::optional<RelatedRecord> forward;
  for (const TrackState& t : m.tracks) {
    if (t.info.kind != TrackKind::Cpu || !(t.kinds & kindBit(RecordKind::CpuOp))) continue;
    if (backward->pid && t.info.pid && t.info.pid != backward->pid) continue;
    q->bind(1, t.info.id).bindU(2, backward->startNs).bind(3, kForwardChunks);
    bool older = false;  // passed this thread's forward ops with smaller numbers
    while (!older && q->step() == SQLITE_ROW) {
      if (!codec::decode(q->blob(1), kSequenceColumns, recs)) continue;
      std::uint64_t chunk = q->u64(0);
      for (std::uint32_t i = 0; i < recs.size(); ++i) {
        const GpuRecord& x = recs[i];
        if (x.kind != RecordKind::CpuOp || !x.reserved || x.start > backward->startNs || inEngine(x.name)) continue;
        if (x.reserved < seq) older = true;
        if (x.reserved == seq && (!forward || x.start > forward->startNs)) forward = related(m, x, codec::recordId(chunk, i));
      }
    }
    q->reset();
  }
  if (!forward) return none;
  BackwardOf b{.backward = std::move(*backward), .forward = std::move(*forward), .sequenceNumber = seq - 1, .python = {}};
  auto around = enclosingOps(b.forward.pid, b.forward.tid, b.forward.startNs);
  if (!around) return around.takeError();
  b.python = pythonFunctions(*around);
  return std::optional<BackwardOf>(std::move(b));
}

}  // namespace strata::cuda
