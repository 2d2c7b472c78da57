// gpuExport: Chrome trace-event JSON or Perfetto's protobuf TrackEvents, both of which
// ui.perfetto.dev opens, streamed track by track in bounded memory. Events on one Chrome thread
// (one Perfetto track) must nest, so overlapping ones get extra lanes.
#include <cstdio>
#include <map>
#include <queue>
#include <set>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

void appendEscaped(std::string& out, std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
}

// Microseconds with three decimals, exactly (the format's unit).
void appendMicros(std::string& out, std::uint64_t ns) {
  out += std::to_string(ns / 1000);
  char buf[8];
  std::snprintf(buf, sizeof buf, ".%03u", static_cast<unsigned>(ns % 1000));
  out += buf;
}

// The Chrome-trace category torch.profiler (Kineto) gives such a record, so that Perfetto and
// TensorBoard group Strata's exports with theirs (not recordKindName: these are Kineto's words).
std::string_view category(const GpuRecord& r) {
  switch (r.kind) {
    case RecordKind::Kernel: return "kernel";
    case RecordKind::Memcpy: return "gpu_memcpy";
    case RecordKind::Memset: return "gpu_memset";
    case RecordKind::Synchronization: return "cuda_sync";
    case RecordKind::RuntimeApi: return "cuda_runtime";
    case RecordKind::DriverApi: return "cuda_driver";
    case RecordKind::Marker: return r.tid ? "user_annotation" : "gpu_user_annotation";
    case RecordKind::GraphLaunch: return "cuda_graph";
    case RecordKind::Overhead: return "overhead";
    case RecordKind::CpuOp: return "cpu_op";
  }
  return "other";
}

struct Pending {
  GpuRecord r;
  std::uint64_t id;
  bool operator<(const Pending& o) const {  // a max-heap: the earliest (longest first) on top
    if (r.start != o.r.start) return r.start > o.r.start;
    return effectiveEnd(r) < effectiveEnd(o.r);
  }
};

class Writer {
 public:
  explicit Writer(std::FILE* f) : f_(f) { buf_.reserve(1 << 20); }
  std::string& buf() { return buf_; }
  bool maybeFlush(bool force = false) {
    if (!force && buf_.size() < (1u << 20)) return true;
    bool ok = std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size();
    bytes_ += buf_.size();
    buf_.clear();
    return ok;
  }
  std::uint64_t bytes() const { return bytes_ + buf_.size(); }

 private:
  std::FILE* f_;
  std::string buf_;
  std::uint64_t bytes_ = 0;
};

// One event as the traversal hands it to a format: a record on a lane (pid, tid) that nests
// with the others on that lane.
struct ExportEvent {
  const GpuRecord& r;
  std::uint64_t id, end;
  std::string_view name;
  bool gpuTrack;
};

// What a format does with the traversal's processes, lanes and events.
class Format {
 public:
  virtual ~Format() = default;
  virtual void header(std::uint64_t base) = 0;
  virtual void process(std::uint64_t pid, const std::string& name, std::uint64_t at) = 0;
  virtual void lane(std::uint64_t pid, std::uint64_t tid, const std::string& name, std::uint64_t at) = 0;
  virtual void event(std::uint64_t pid, std::uint64_t tid, const ExportEvent& e) = 0;
  virtual void trackDone() {}
  virtual void footer() = 0;
};

class ChromeFormat final : public Format {
 public:
  explicit ChromeFormat(std::string& out) : out_(out) {}
  void header(std::uint64_t base) override {
    base_ = base;
    out_ += "{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":" + std::to_string(base) + ",\"traceEvents\":[\n";
  }
  void process(std::uint64_t pid, const std::string& name, std::uint64_t) override { metadata("process_name", pid, 0, name); }
  void lane(std::uint64_t pid, std::uint64_t tid, const std::string& name, std::uint64_t) override {
    metadata("thread_name", pid, tid, name);
  }
  void event(std::uint64_t pid, std::uint64_t tid, const ExportEvent& e) override {
    const GpuRecord& r = e.r;
    sep();
    out_ += "{\"ph\":\"X\",\"cat\":\"";
    out_ += category(r);
    out_ += "\",\"name\":\"";
    appendEscaped(out_, e.name);
    out_ += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
    appendMicros(out_, r.start >= base_ ? r.start - base_ : 0);
    out_ += ",\"dur\":";
    appendMicros(out_, e.end - r.start);
    out_ += ",\"args\":{\"strata id\":" + std::to_string(e.id);
    if (r.correlation) out_ += ",\"correlation\":" + std::to_string(r.correlation);
    if (r.externalId) out_ += ",\"External id\":" + std::to_string(r.externalId);
    if (e.gpuTrack) out_ += ",\"device\":" + std::to_string(r.device) + ",\"stream\":" + std::to_string(r.stream);
    switch (r.kind) {
      case RecordKind::Kernel: {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      ",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"registers per thread\":%u,\"shared memory\":%u,"
                      "\"static shared memory\":%u,\"dynamic shared memory\":%u",
                      r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], r.registersPerThread,
                      r.staticSharedMemory + r.dynamicSharedMemory, r.staticSharedMemory, r.dynamicSharedMemory);
        out_ += buf;
        break;
      }
      case RecordKind::Memcpy:
        out_ += ",\"bytes\":" + std::to_string(r.bytes) + ",\"kind\":\"" + std::string(copyKindName(r.copyKind)) + "\"";
        break;
      case RecordKind::Memset:
        out_ += ",\"bytes\":" + std::to_string(r.bytes);
        break;
      case RecordKind::Synchronization:
        out_ += ",\"kind\":\"" + std::string(syncKindName(r.copyKind)) + "\"";
        break;
      case RecordKind::RuntimeApi:
      case RecordKind::DriverApi:
        if (r.result) out_ += ",\"result\":" + std::to_string(r.result);
        break;
      default:
        break;
    }
    out_ += "}}";
  }
  void footer() override { out_ += "\n]}\n"; }

 private:
  void sep() {
    if (!first_) out_ += ",\n";
    first_ = false;
  }
  void metadata(const char* what, std::uint64_t pid, std::uint64_t tid, const std::string& name) {
    sep();
    out_ += "{\"ph\":\"M\",\"name\":\"";
    out_ += what;
    out_ += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"";
    appendEscaped(out_, name);
    out_ += "\"}}";
  }
  std::string& out_;
  std::uint64_t base_ = 0;
  bool first_ = true;
};

// Perfetto's trace format (protos/perfetto/trace: Trace, TracePacket, TrackDescriptor,
// TrackEvent, DebugAnnotation), written by hand: a TrackDescriptor per process and per lane
// (a thread track), then SLICE_BEGIN/SLICE_END pairs on the lane's track, one packet sequence
// per lane so each sequence's times never go back. Times are absolute ns.
class PerfettoFormat final : public Format {
 public:
  explicit PerfettoFormat(std::string& out) : out_(out) {}
  void header(std::uint64_t) override {}
  void process(std::uint64_t pid, const std::string& name, std::uint64_t at) override {
    std::string proc, desc;
    varintField(proc, 1, pid);  // ProcessDescriptor.pid
    stringField(proc, 6, name);  // .process_name
    varintField(desc, 1, processUuid(pid));  // TrackDescriptor.uuid
    messageField(desc, 3, proc);  // .process
    packet(at, 0, 60, desc);
  }
  void lane(std::uint64_t pid, std::uint64_t tid, const std::string& name, std::uint64_t at) override {
    std::string thread, desc;
    varintField(thread, 1, pid);  // ThreadDescriptor.pid
    varintField(thread, 2, tid);  // .tid
    stringField(thread, 5, name);  // .thread_name
    varintField(desc, 1, laneUuid(pid, tid));
    messageField(desc, 4, thread);  // TrackDescriptor.thread
    packet(at, 0, 60, desc);
    lanes_.emplace(std::make_pair(pid, tid), Lane{nextSequence_++, {}});
  }
  void event(std::uint64_t pid, std::uint64_t tid, const ExportEvent& e) override {
    Lane& lane = lanes_.at({pid, tid});
    std::uint64_t uuid = laneUuid(pid, tid);
    close(lane, uuid, e.r.start);
    const GpuRecord& r = e.r;
    std::string ev;
    varintField(ev, 9, 1);  // TrackEvent.type = TYPE_SLICE_BEGIN
    varintField(ev, 11, uuid);  // .track_uuid
    stringField(ev, 22, category(r));  // .categories
    stringField(ev, 23, e.name);  // .name
    annotate(ev, "strata id", e.id);
    if (r.correlation) annotate(ev, "correlation", r.correlation);
    if (r.externalId) annotate(ev, "External id", r.externalId);
    if (e.gpuTrack) {
      annotate(ev, "device", r.device);
      annotate(ev, "stream", r.stream);
    }
    switch (r.kind) {
      case RecordKind::Kernel: {
        auto dims = [](const std::int32_t (&v)[3]) {
          return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
        };
        annotate(ev, "grid", dims(r.grid));
        annotate(ev, "block", dims(r.block));
        annotate(ev, "registers per thread", r.registersPerThread);
        annotate(ev, "static shared memory", r.staticSharedMemory);
        annotate(ev, "dynamic shared memory", r.dynamicSharedMemory);
        break;
      }
      case RecordKind::Memcpy:
        annotate(ev, "bytes", r.bytes);
        annotate(ev, "kind", copyKindName(r.copyKind));
        break;
      case RecordKind::Memset:
        annotate(ev, "bytes", r.bytes);
        break;
      case RecordKind::Synchronization:
        annotate(ev, "kind", syncKindName(r.copyKind));
        break;
      default:
        break;
    }
    packet(r.start, lane.sequence, 11, ev);
    lane.open.push_back(e.end);
  }
  void trackDone() override {
    for (auto& [key, lane] : lanes_) close(lane, laneUuid(key.first, key.second), UINT64_MAX);
    lanes_.clear();
  }
  void footer() override {}

 private:
  struct Lane {
    std::uint32_t sequence;
    std::vector<std::uint64_t> open;  // ends of the slices begun and not yet ended, outermost first
  };
  static std::uint64_t processUuid(std::uint64_t pid) { return (pid << 32) | 0xffffffffull; }
  static std::uint64_t laneUuid(std::uint64_t pid, std::uint64_t tid) { return (pid << 32) | (tid & 0xffffffffull); }
  // Ends the slices of `lane` that end by `t`, innermost first.
  void close(Lane& lane, std::uint64_t uuid, std::uint64_t t) {
    while (!lane.open.empty() && lane.open.back() <= t) {
      std::string ev;
      varintField(ev, 9, 2);  // TYPE_SLICE_END
      varintField(ev, 11, uuid);
      packet(lane.open.back(), lane.sequence, 11, ev);
      lane.open.pop_back();
    }
  }
  static void varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
      out += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out += static_cast<char>(v);
  }
  static void varintField(std::string& out, int field, std::uint64_t v) {
    varint(out, static_cast<std::uint64_t>(field) << 3);
    varint(out, v);
  }
  static void stringField(std::string& out, int field, std::string_view s) {
    varint(out, (static_cast<std::uint64_t>(field) << 3) | 2);
    varint(out, s.size());
    out.append(s);
  }
  static void messageField(std::string& out, int field, const std::string& m) { stringField(out, field, m); }
  static void annotate(std::string& ev, std::string_view name, std::uint64_t v) {
    std::string a;
    stringField(a, 10, name);  // DebugAnnotation.name
    varintField(a, 3, v);  // .uint_value
    messageField(ev, 4, a);  // TrackEvent.debug_annotations
  }
  static void annotate(std::string& ev, std::string_view name, std::string_view v) {
    std::string a;
    stringField(a, 10, name);
    stringField(a, 6, v);  // .string_value
    messageField(ev, 4, a);
  }
  // One TracePacket (Trace.packet = 1): timestamp = 8, trusted_packet_sequence_id = 10, and its
  // payload (track_event = 11, track_descriptor = 60).
  void packet(std::uint64_t ts, std::uint32_t sequence, int payloadField, const std::string& payload) {
    std::string p;
    varintField(p, 8, ts);
    if (sequence) varintField(p, 10, sequence);
    messageField(p, payloadField, payload);
    messageField(out_, 1, p);
  }
  std::string& out_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Lane> lanes_;
  std::uint32_t nextSequence_ = 1;
};

}  // namespace

Result<ExportReport> Store::exportChrome(const std::string& path, const ExportOptions& options) {
  return exportTrace(path, ExportFormat::Chrome, options);
}

Result<ExportReport> Store::exportTrace(const std::string& path, ExportFormat format, const ExportOptions& options) {
  if (auto r = flush(); !r) return r.takeError();
  Impl& m = *impl_;
  ExportReport report;
  TimeSpan span = counts().timeSpan;
  std::uint64_t ws = options.window ? options.window->startNs : 0;
  std::uint64_t we = options.window ? options.window->endNs : static_cast<std::uint64_t>(INT64_MAX);
  if (options.window && we <= ws) return Error{kBadArgument, "gpuExport: the window's endNs must be greater than its startNs", true};
  std::uint64_t base = options.window ? ws : span.startNs;

  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return errnoError(kIo, "gpuExport: open " + tmp, errno);
  Writer w(f);
  std::string& out = w.buf();
  ChromeFormat chrome(out);
  PerfettoFormat perfetto(out);
  Format& fmt = format == ExportFormat::Chrome ? static_cast<Format&>(chrome) : static_cast<Format&>(perfetto);
  fmt.header(base);

  // Lane ids: CPU threads keep their pid/tid; each (process, GPU) gets a pid of its own above
  // any real one, extra lanes a tid of their own.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> gpuPids;
  std::uint64_t nextSynthetic = std::uint64_t{1} << 30;
  std::set<std::uint64_t> namedProcesses;
  std::vector<GpuRecord> recs;
  auto q = sql::Stmt::prepare(m.db, "SELECT id,start_ns,data FROM chunks WHERE track=? AND start_ns>=? AND start_ns<? ORDER BY start_ns", kIo, false);
  if (!q) {
    std::fclose(f);
    return q.takeError();
  }
  bool ioFailed = false;
  std::string failure;
  for (const TrackState& t : m.tracks) {
    if (t.start == 0 || t.start >= we || t.end <= ws) continue;
    std::uint64_t pid, tid;
    std::string processName;
    if (t.info.kind == TrackKind::Cpu) {
      pid = t.info.pid ? t.info.pid : 1;
      tid = t.info.tid;
      processName = "process " + std::to_string(t.info.pid);
    } else {
      auto key = std::make_pair(t.info.pid, t.info.device);
      auto it = gpuPids.find(key);
      if (it == gpuPids.end()) it = gpuPids.emplace(key, nextSynthetic++).first;
      pid = it->second;
      tid = t.info.stream;
      processName = "GPU " + std::to_string(t.info.device) + (t.info.pid ? " (pid " + std::to_string(t.info.pid) + ")" : "");
    }
    std::uint64_t trackStart = std::max(t.start, ws);
    if (namedProcesses.insert(pid).second) fmt.process(pid, processName, trackStart);
    std::string threadName = t.info.kind == TrackKind::Cpu ? "thread " + std::to_string(t.info.tid)
                                                            : "stream " + std::to_string(t.info.stream);
    fmt.lane(pid, tid, threadName, trackStart);

    std::vector<std::vector<std::uint64_t>> lanes;  // per lane: ends of the open events
    std::vector<std::uint64_t> laneTids{tid};
    std::priority_queue<Pending> heap;
    // Records of this track that started before the window's reach and still run in it.
    if (options.window) {
      auto lq = sql::Stmt::prepare(m.db, "SELECT id FROM long_records WHERE track=? AND start_ns<? AND end_ns>?", kIo, false);
      if (lq) {
        lq->bind(1, t.info.id).bindU(2, ws > lod::kLongNs ? ws - lod::kLongNs : 0).bindU(3, ws);
        while (lq->step() == SQLITE_ROW) {
          std::uint64_t id = lq->u64(0);
          std::vector<GpuRecord> one;
          if (m.readChunk(static_cast<std::int64_t>(codec::chunkOf(id)), codec::kAllColumns, one) && codec::indexOf(id) < one.size()) {
            heap.push(Pending{one[codec::indexOf(id)], id});
          }
        }
      }
    }
    q->bind(1, t.info.id).bindU(2, ws > lod::kLongNs ? ws - lod::kLongNs : 0).bindU(3, we);
    bool more = true;
    int rc = q->step();
    auto emit = [&](const Pending& p) {
      const GpuRecord& r = p.r;
      std::uint64_t en = effectiveEnd(r);
      if (en <= ws && r.start < ws) return;
      if (r.start >= we) return;
      std::size_t lane = 0;
      for (; lane < lanes.size(); ++lane) {
        auto& stack = lanes[lane];
        while (!stack.empty() && stack.back() <= r.start) stack.pop_back();
        if (stack.empty() || stack.back() >= en) break;
      }
      if (lane == lanes.size()) {
        lanes.emplace_back();
        if (lane >= laneTids.size()) {
          laneTids.push_back(nextSynthetic++);
          fmt.lane(pid, laneTids.back(), threadName + " (overlap " + std::to_string(lane) + ")", r.start);
          ++report.extraLanes;
        }
      }
      lanes[lane].push_back(en);
      fmt.event(pid, laneTids[lane], ExportEvent{r, p.id, en, m.nameText(r.name), t.info.kind == TrackKind::Gpu});
      ++report.events;
      if (!w.maybeFlush()) ioFailed = true;
    };
    while (more || !heap.empty()) {
      // Load every chunk that may hold a record starting before the heap's earliest.
      while (more) {
        if (rc != SQLITE_ROW) {
          more = false;
          if (rc != SQLITE_DONE) failure = m.db.message();
          break;
        }
        if (!heap.empty() && q->u64(1) > heap.top().r.start) break;
        std::uint64_t chunk = q->u64(0);
        if (!codec::decode(q->blob(2), codec::kAllColumns, recs)) {
          failure = "chunk " + std::to_string(chunk) + " is malformed";
          more = false;
          break;
        }
        for (std::uint32_t i = 0; i < recs.size(); ++i) {
          if (!isTimed(recs[i])) {
            if (!options.window) ++report.skippedUntimed;
            continue;
          }
          heap.push(Pending{recs[i], codec::recordId(chunk, i)});
        }
        rc = q->step();
      }
      if (heap.empty()) continue;
      Pending p = heap.top();
      heap.pop();
      emit(p);
      if (ioFailed || !failure.empty()) break;
    }
    q->reset();
    fmt.trackDone();
    if (ioFailed || !failure.empty()) break;
  }
  fmt.footer();
  if (!w.maybeFlush(true)) ioFailed = true;
  report.bytes = w.bytes();
  int closeErr = std::fclose(f) == 0 ? 0 : errno;
  if (!failure.empty()) {
    std::remove(tmp.c_str());
    return Error{kIo, "gpuExport: reading " + m.path + ": " + failure, true};
  }
  if (ioFailed || closeErr) {
    int err = closeErr ? closeErr : errno;
    std::remove(tmp.c_str());
    return errnoError(kIo, "gpuExport: write " + tmp, err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return errnoError(kIo, "gpuExport: rename " + tmp + " to " + path, err);
  }
  return report;
}

}  // namespace strata::cuda
