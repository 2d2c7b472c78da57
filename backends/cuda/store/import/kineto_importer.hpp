// A Kineto trace's events as they are parsed (kineto.cpp's Handler fills one Event at a time)
// turned into GpuRecords: flows tying a launch to its kernel, records held until the trace's
// base time is known, batches into the store.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "input.hpp"
#include "kineto_fields.hpp"
#include "strata/cuda/import.hpp"

namespace strata::cuda::kineto {

using namespace store_errors;

struct Event {
  std::string ph, cat, name, argName;
  std::string pidText;  // a pid given as a string ("CPU functions" in torch's own exporter)
  bool hasTs = false, hasDur = false, pidNum = false, tidNum = false, hasId = false;
  std::int64_t ts = 0, dur = 0, pid = 0, tid = 0, device = -1, stream = -1, context = 0;
  std::uint64_t id = 0, correlation = 0, externalId = 0, bytes = 0, registers = 0, sharedMemory = 0;
  std::int64_t sequence = -1;  // autograd's sequence number of an op (its backward op has the same)
  std::int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  void clear() {
    ph.clear();
    cat.clear();
    pidText.clear();
    name.clear();
    argName.clear();
    hasTs = hasDur = pidNum = tidNum = hasId = false;
    ts = dur = pid = tid = context = 0;
    device = stream = -1;
    id = correlation = externalId = bytes = registers = sharedMemory = 0;
    sequence = -1;
    std::fill(std::begin(grid), std::end(grid), 0);
    std::fill(std::begin(block), std::end(block), 0);
  }
};

// A record before the trace's base time is known (Kineto writes baseTimeNanoseconds last).
struct Pending {
  GpuRecord r;
  std::int64_t start = 0, end = 0;  // relative ns
  bool timed = false;
};

struct FlowKey {
  std::int64_t pid, tid, ts;
  bool operator==(const FlowKey&) const = default;
};
struct FlowKeyHash {
  std::size_t operator()(const FlowKey& k) const {
    return std::hash<std::int64_t>{}(k.ts) ^ (std::hash<std::int64_t>{}(k.pid) * 31) ^ (std::hash<std::int64_t>{}(k.tid) * 131);
  }
};

class Importer {
 public:
  Importer(Store& store, ImportReport& report) : store_(store), report_(report) { batch_.reserve(kBatch); }
  ~Importer() {
    if (spool_) std::fclose(spool_);
  }

  std::string error;        // set when a handler callback fails
  std::uint64_t eventIndex = 0;
  bool sawEvents = false;
  std::optional<std::int64_t> base;  // baseTimeNanoseconds, once known

  // --- called by the handler ---
  bool event(const Event& e) {
    ++report_.events;
    if (e.ph == "X" || e.ph == "i" || e.ph == "I") return record(e);
    if ((e.ph == "s" || e.ph == "f" || e.ph == "t") && e.cat == "ac2g") return flow(e);
    skip(e.ph == "M" ? "metadata events" : "events of phase '" + e.ph + "'");
    return true;
  }
  bool device(const DeviceProperties& p) {
    auto r = store_.setDeviceProperties(p);
    if (!r) {
      error = r.error().message;
      return false;
    }
    ++report_.devices;
    return true;
  }
  bool setBase(std::int64_t b) {
    base = b;
    return true;
  }
  Result<void> finish() {
    if (auto r = flushBatch(); !r) return r;
    if (!spool_) return {};
    // Replay what was parsed before the base time was known.
    std::rewind(spool_);
    std::vector<Pending> buf(kBatch);
    std::vector<GpuRecord> out;
    out.reserve(kBatch);
    for (;;) {
      std::size_t n = std::fread(buf.data(), sizeof(Pending), buf.size(), spool_);
      if (n == 0) break;
      out.clear();
      for (std::size_t i = 0; i < n; ++i) out.push_back(absolute(buf[i]));
      if (auto r = store_.ingest(out); !r) return r;
      report_.records += n;
    }
    if (std::ferror(spool_)) return errnoError(kIo, "reading the import's spool file", errno);
    return {};
  }

 private:
  static constexpr std::size_t kBatch = 8192;

  void skip(const std::string& why) { ++report_.skipped[why]; }

  GpuRecord absolute(const Pending& p) const {
    GpuRecord r = p.r;
    if (p.timed) {
      std::int64_t b = base.value_or(0);
      std::int64_t s = b + p.start, e = b + p.end;
      r.start = s > 0 ? static_cast<std::uint64_t>(s) : 0;
      r.end = e > 0 ? static_cast<std::uint64_t>(e) : 0;
      if (r.start == 0) r.end = 0;
    }
    return r;
  }

  bool record(const Event& e) {
    const auto what = eventKind(e.cat, e.pidText);
    if (!what) {
      skip(e.cat.empty() ? "events without a category" : "events of category '" + e.cat + "'");
      return true;
    }
    const RecordKind kind = what->kind;
    const bool gpu = what->gpu;
    Pending p;
    GpuRecord& r = p.r;
    r.kind = kind;
    if (gpu) {
      r.device = static_cast<std::uint32_t>(e.device >= 0 ? e.device : e.pidNum ? e.pid : 0);
      r.stream = static_cast<std::uint32_t>(e.stream >= 0 ? e.stream : e.tidNum ? e.tid : 0);
      r.context = static_cast<std::uint32_t>(e.context);
    } else {
      r.pid = static_cast<std::uint32_t>(e.pid);
      r.tid = static_cast<std::uint32_t>(e.tid);
      if (r.tid == 0) r.tid = r.pid;  // a CPU event is on a thread; 0 would make it GPU-side
    }
    r.correlation = static_cast<std::uint32_t>(e.correlation);
    r.externalId = e.externalId;
    // An op's autograd sequence number (+1; 0: none): a backward op has its forward op's.
    if (kind == RecordKind::CpuOp && e.sequence >= 0 && e.sequence < 0xffffffffll)
      r.reserved = static_cast<std::uint32_t>(e.sequence + 1);
    r.name = store_.internName(e.name);
    switch (kind) {
      case RecordKind::Kernel:
        std::copy(std::begin(e.grid), std::end(e.grid), r.grid);
        std::copy(std::begin(e.block), std::end(e.block), r.block);
        r.registersPerThread = static_cast<std::uint32_t>(e.registers);
        r.staticSharedMemory = static_cast<std::uint32_t>(e.sharedMemory);  // Kineto gives the sum
        break;
      case RecordKind::Memcpy: {
        r.bytes = e.bytes;
        r.copyKind = copyKindFromName(e.name);
        auto open = e.name.find('('), arrow = e.name.find("->");
        if (open != std::string::npos && arrow != std::string::npos && arrow > open) {
          r.srcKind = memoryKind(std::string_view(e.name).substr(open + 1));
          r.dstKind = memoryKind(std::string_view(e.name).substr(arrow + 3));
        }
        break;
      }
      case RecordKind::Memset:
        r.bytes = e.bytes;
        break;
      case RecordKind::Synchronization:
        r.copyKind = syncKindFromName(e.name);
        break;
      default:
        break;
    }
    if (e.hasTs) {
      p.timed = true;
      p.start = e.ts;
      p.end = e.ts + (e.hasDur && e.dur > 0 ? e.dur : 0);
    }
    // Only launches and GPU work are ends of ac2g flows; Kineto gives them correlations already.
    bool flowEnd = gpu || kind == RecordKind::RuntimeApi || kind == RecordKind::DriverApi;
    if (!r.correlation && flowEnd && kind != RecordKind::Marker) noCorrelation_[FlowKey{e.pid, e.tid, e.ts}] = batch_.size();
    batch_.push_back(p);
    if (batch_.size() == kBatch) {
      if (auto x = flushBatch(); !x) {
        error = x.error().message;
        return false;
      }
    }
    return true;
  }

  // An ac2g flow's id is the correlation of the slice it binds to; used when args lacked one.
  bool flow(const Event& e) {
    if (!e.hasId || !e.hasTs || noCorrelation_.empty()) return true;
    auto it = noCorrelation_.find(FlowKey{e.pid, e.tid, e.ts});
    if (it != noCorrelation_.end() && it->second < batch_.size()) {
      batch_[it->second].r.correlation = static_cast<std::uint32_t>(e.id);
      noCorrelation_.erase(it);
    }
    return true;
  }

  Result<void> flushBatch() {
    noCorrelation_.clear();
    if (batch_.empty()) return {};
    if (base) {
      std::vector<GpuRecord> out;
      out.reserve(batch_.size());
      for (const Pending& p : batch_) out.push_back(absolute(p));
      if (auto r = store_.ingest(out); !r) return r;
      report_.records += out.size();
    } else {
      if (!spool_) {
        spool_ = std::tmpfile();
        if (!spool_) return errnoError(kIo, "creating a spool file for the import (TMPDIR)", errno);
      }
      if (std::fwrite(batch_.data(), sizeof(Pending), batch_.size(), spool_) != batch_.size()) {
        return errnoError(kIo, "writing the import's spool file", errno);
      }
    }
    batch_.clear();
    return {};
  }

  Store& store_;
  ImportReport& report_;
  std::vector<Pending> batch_;
  std::unordered_map<FlowKey, std::size_t, FlowKeyHash> noCorrelation_;
  std::FILE* spool_ = nullptr;
};

}  // namespace strata::cuda::kineto
