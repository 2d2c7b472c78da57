// gpuExport: Chrome trace-event JSON that ui.perfetto.dev opens, streamed track by track in
// bounded memory. Events on one Chrome thread must nest, so overlapping ones get extra lanes.
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

}  // namespace

Result<ExportReport> Store::exportChrome(const std::string& path, const ExportOptions& options) {
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
  out += "{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":" + std::to_string(base) + ",\"traceEvents\":[\n";
  bool firstEvent = true;
  auto sep = [&] {
    if (!firstEvent) out += ",\n";
    firstEvent = false;
  };
  auto metadata = [&](const char* what, std::uint64_t pid, std::uint64_t tid, const std::string& name) {
    sep();
    out += "{\"ph\":\"M\",\"name\":\"";
    out += what;
    out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"";
    appendEscaped(out, name);
    out += "\"}}";
  };

  // Chrome ids: CPU threads keep their pid/tid; each (process, GPU) gets a pid of its own above
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
    if (namedProcesses.insert(pid).second) metadata("process_name", pid, 0, processName);
    std::string threadName = t.info.kind == TrackKind::Cpu ? "thread " + std::to_string(t.info.tid)
                                                            : "stream " + std::to_string(t.info.stream);
    metadata("thread_name", pid, tid, threadName);

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
          metadata("thread_name", pid, laneTids.back(), threadName + " (overlap " + std::to_string(lane) + ")");
          ++report.extraLanes;
        }
      }
      lanes[lane].push_back(en);
      sep();
      out += "{\"ph\":\"X\",\"cat\":\"";
      out += category(r);
      out += "\",\"name\":\"";
      appendEscaped(out, m.nameText(r.name));
      out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(laneTids[lane]) + ",\"ts\":";
      appendMicros(out, r.start >= base ? r.start - base : 0);
      out += ",\"dur\":";
      appendMicros(out, en - r.start);
      out += ",\"args\":{\"strata id\":" + std::to_string(p.id);
      if (r.correlation) out += ",\"correlation\":" + std::to_string(r.correlation);
      if (r.externalId) out += ",\"External id\":" + std::to_string(r.externalId);
      if (t.info.kind == TrackKind::Gpu) {
        out += ",\"device\":" + std::to_string(r.device) + ",\"stream\":" + std::to_string(r.stream);
      }
      switch (r.kind) {
        case RecordKind::Kernel: {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        ",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"registers per thread\":%u,\"shared memory\":%u,"
                        "\"static shared memory\":%u,\"dynamic shared memory\":%u",
                        r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], r.registersPerThread,
                        r.staticSharedMemory + r.dynamicSharedMemory, r.staticSharedMemory, r.dynamicSharedMemory);
          out += buf;
          break;
        }
        case RecordKind::Memcpy:
          out += ",\"bytes\":" + std::to_string(r.bytes) + ",\"kind\":\"" + std::string(copyKindName(r.copyKind)) + "\"";
          break;
        case RecordKind::Memset:
          out += ",\"bytes\":" + std::to_string(r.bytes);
          break;
        case RecordKind::Synchronization:
          out += ",\"kind\":\"" + std::string(syncKindName(r.copyKind)) + "\"";
          break;
        case RecordKind::RuntimeApi:
        case RecordKind::DriverApi:
          if (r.result) out += ",\"result\":" + std::to_string(r.result);
          break;
        default:
          break;
      }
      out += "}}";
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
    if (ioFailed || !failure.empty()) break;
  }
  out += "\n]}\n";
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
