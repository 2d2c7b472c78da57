// !gpu top|kernel|timeline and !sql over the store, as text a person reads in the Debug Console.
#include "console_text.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

namespace strata::cuda::text {

namespace {

std::string printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string pad(std::string s, std::size_t width, bool right = false) {
  // Widths count characters, not bytes: µ is two bytes.
  std::size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  if (chars >= width) return s;
  std::string fill(width - chars, ' ');
  return right ? fill + s : s + fill;
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// What follows the first `n` words of `line` (a kernel name or a query keeps its spaces).
std::string_view after(std::string_view line, int n) {
  line = trim(line);
  for (int i = 0; i < n; ++i) {
    auto space = line.find_first_of(" \t\n");
    if (space == std::string_view::npos) return {};
    line = trim(line.substr(space));
  }
  return line;
}

std::optional<std::uint64_t> number(const std::string& w) {
  if (w.empty() || w.size() > 19 || w.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(w);
}

Error usage(const std::string& text) { return Error{errors::kBadArguments, "usage: " + text, false}; }

std::string sqlText(const SqlValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "NULL";
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return printf("%g", *d);
  return std::get<std::string>(v);
}

struct KernelName {
  std::int64_t id = 0;
  std::string name, mangled;
  std::uint64_t count = 0, timed = 0, totalNs = 0, minNs = 0, maxNs = 0;
};

Result<std::vector<KernelName>> kernelNames(Store& store) {
  auto r = store.sql(
      "SELECT k.name, coalesce(s.demangled, s.text), s.text, k.count, k.timed, k.total_ns, k.min_ns, k.max_ns "
      "FROM kernel_stats k JOIN strings s ON s.id = k.name ORDER BY k.total_ns DESC",
      1 << 20);
  if (!r) return r.takeError();
  std::vector<KernelName> out;
  for (const auto& row : r->rows) {
    auto i64 = [&](int c) { return std::holds_alternative<std::int64_t>(row[c]) ? std::get<std::int64_t>(row[c]) : 0; };
    out.push_back(KernelName{i64(0), sqlText(row[1]), sqlText(row[2]), static_cast<std::uint64_t>(i64(3)),
                             static_cast<std::uint64_t>(i64(4)), static_cast<std::uint64_t>(i64(5)),
                             static_cast<std::uint64_t>(i64(6)), static_cast<std::uint64_t>(i64(7))});
  }
  return out;
}

// One launch's measured hardware metrics, or why there are none, on one line.
std::string measured(const KernelMetrics& m) {
  if (!m.error.empty()) return m.error;
  std::string s;
  auto add = [&](const char* what, const std::optional<double>& v, const char* unit) {
    if (!v) return;
    s += (s.empty() ? "" : ", ") + std::string(what) + " " + printf("%.1f", *v) + unit;
  };
  add("SM throughput", m.smThroughputPct, "%");
  add("DRAM throughput", m.dramThroughputPct, "%");
  add("achieved occupancy", m.achievedOccupancyPct, "%");
  if (m.durationNs) s += (s.empty() ? "" : ", ") + std::string("GPU time ") + duration(static_cast<std::uint64_t>(*m.durationNs + 0.5));
  if (m.passes) s += " (" + std::to_string(m.passes) + " replay passes)";
  return s;
}

Result<std::string> kernelReport(Store& store, std::string_view wanted) {
  auto names = kernelNames(store);
  if (!names) return names.takeError();
  std::vector<const KernelName*> exact, partial;
  for (const auto& k : *names) {
    if (k.name == wanted || k.mangled == wanted) exact.push_back(&k);
    else if (k.name.find(wanted) != std::string::npos) partial.push_back(&k);
  }
  const auto& found = exact.empty() ? partial : exact;
  if (found.empty())
    return Error{errors::kNoGpuRecord,
                 "no kernel is named or has a name containing '" + std::string(wanted) + "' (" +
                     grouped(names->size()) + " kernel names; !gpu top lists the busiest)",
                 false};
  if (found.size() > 1) {
    std::string out = grouped(found.size()) + " kernels have names containing '" + std::string(wanted) +
                      "'; name one of them in full:\n";
    for (std::size_t i = 0; i < found.size() && i < 20; ++i)
      out += "  " + pad(duration(found[i]->totalNs), 10, true) + "  " + pad(grouped(found[i]->count), 8, true) + "  " +
             found[i]->name + "\n";
    if (found.size() > 20) out += "  ... and " + grouped(found.size() - 20) + " more\n";
    out.pop_back();
    return out;
  }
  const KernelName& k = *found.front();
  std::string out = k.name + "\n";
  if (k.mangled != k.name) out += "  mangled: " + k.mangled + "\n";
  out += "  launches: " + grouped(k.count);
  if (k.timed) {
    out += ", total " + duration(k.totalNs) + ", avg " + duration(k.totalNs / k.timed) + ", min " + duration(k.minNs) +
           ", max " + duration(k.maxNs);
  }
  out += "\n";
  // Launches measured at a profile request (!gpu profile), and a request that measured none.
  if (auto all = store.kernelMetrics(); all) {
    std::vector<const KernelMetrics*> mine;
    for (const KernelMetrics& m : *all)
      if (m.kernel == k.mangled) mine.push_back(&m);
    for (std::size_t i = 0; i < mine.size() && i < 10; ++i)
      out += "  " + std::string(mine[i]->error.empty() ? "measured" : "not measured") + " (correlation " +
             std::to_string(mine[i]->correlation) + "): " + measured(*mine[i]) + "\n";
    if (mine.size() > 10) out += "  ... and " + grouped(mine.size() - 10) + " more measured launches (!sql SELECT * FROM kernel_metrics)\n";
  }
  auto slowest = store.sql("SELECT id FROM kernels WHERE name_id = " + std::to_string(k.id) +
                               " ORDER BY duration_ns DESC LIMIT 1",
                           1);
  if (!slowest) return slowest.takeError();
  if (slowest->rows.empty() || !std::holds_alternative<std::int64_t>(slowest->rows[0][0])) return out;
  auto detail = store.kernel(static_cast<std::uint64_t>(std::get<std::int64_t>(slowest->rows[0][0])));
  if (!detail) return detail.takeError();
  out += "The slowest launch:\n" + record(*detail);
  return out;
}

}  // namespace

std::string duration(std::uint64_t ns) {
  if (ns < 1000) return std::to_string(ns) + " ns";
  if (ns < 1000000) return printf("%.1f µs", ns / 1e3);
  if (ns < 1000000000) return printf("%.2f ms", ns / 1e6);
  return printf("%.2f s", ns / 1e9);
}

std::string bytes(std::uint64_t n) {
  if (n < 1024) return std::to_string(n) + " B";
  if (n < (1u << 20)) return printf("%.1f KiB", n / 1024.0);
  if (n < (1u << 30)) return printf("%.2f MiB", n / 1048576.0);
  return printf("%.2f GiB", n / 1073741824.0);
}

std::string summary(const Summary& s) {
  std::string out = "GPU data: " + grouped(s.records) + " records";
  if (s.timeSpan.endNs > s.timeSpan.startNs) out += " over " + duration(s.timeSpan.endNs - s.timeSpan.startNs);
  out += " (from " + std::to_string(s.timeSpan.startNs) + " ns); " + grouped(s.devices.size()) +
         (s.devices.size() == 1 ? " device, " : " devices, ") + grouped(s.streams.size()) +
         (s.streams.size() == 1 ? " stream" : " streams");
  out += s.dropped ? "; " + grouped(s.dropped) + " records DROPPED by the collector\n" : "; none dropped\n";
  for (const auto& d : s.devices)
    out += "  GPU " + std::to_string(d.device) + (d.name.empty() ? "" : ": " + d.name) + ", " + grouped(d.kernels) +
           " kernels\n";
  if (s.kernels.empty()) {
    out += "No kernels.\n";
  } else {
    out += "Kernels (top " + grouped(s.kernels.size()) + " of " + grouped(s.kernelNames) + " by total time):\n";
    out += "  " + pad("total", 10, true) + "  " + pad("count", 8, true) + "  " + pad("avg", 10, true) + "  " +
           pad("min", 10, true) + "  " + pad("max", 10, true) + "  name\n";
    for (const auto& k : s.kernels)
      out += "  " + pad(duration(k.totalNs), 10, true) + "  " + pad(grouped(k.count), 8, true) + "  " +
             pad(duration(k.avgNs), 10, true) + "  " + pad(duration(k.minNs), 10, true) + "  " +
             pad(duration(k.maxNs), 10, true) + "  " + k.name + "\n";
  }
  if (!s.copies.empty()) {
    out += "Copies:\n";
    for (const auto& c : s.copies)
      out += "  " + pad(c.kind, 7) + "  " + pad(grouped(c.count), 8, true) + "  " + pad(bytes(c.bytes), 10, true) +
             "  " + pad(duration(c.totalNs), 10, true) + "\n";
  }
  if (!s.syncs.empty()) {
    out += "Synchronizations:\n";
    for (const auto& c : s.syncs)
      out += "  " + pad(c.kind, 17) + "  " + pad(grouped(c.count), 8, true) + "  " + pad(duration(c.totalNs), 10, true) +
             "\n";
  }
  if (s.untimed) out += grouped(s.untimed) + " records without times are stored but not counted in the times above.\n";
  out.pop_back();
  return out;
}

std::string timeline(const Timeline& t) {
  std::string out = "Window " + std::to_string(t.window.startNs) + " ns + " +
                    duration(t.window.endNs - t.window.startNs) + ": " + grouped(t.items.size()) + " items";
  if (t.level >= 0) out += " (neighbours merged in steps of " + duration(t.bucketNs) + ")";
  if (t.tracksOmitted) out += "; " + grouped(t.tracksOmitted) + " tracks left out";
  out += "\n";
  std::uint32_t track = UINT32_MAX;
  for (const auto& i : t.items) {
    if (i.track != track) {
      track = i.track;
      auto k = std::find_if(t.tracks.begin(), t.tracks.end(), [&](const Track& x) { return x.id == track; });
      out += (k != t.tracks.end() ? k->name : "track " + std::to_string(track)) + ":\n";
    }
    std::uint64_t at = i.startNs > t.window.startNs ? i.startNs - t.window.startNs : 0;
    std::string prefix = i.startNs < t.window.startNs ? "-" : "+";
    if (i.startNs < t.window.startNs) at = t.window.startNs - i.startNs;
    out += "  " + pad(prefix + duration(at), 12, true) + "  ";
    if (i.count > 1) {
      std::uint64_t span = i.endNs > i.startNs ? i.endNs - i.startNs : 0;
      int busy = span ? static_cast<int>(std::min<std::uint64_t>(100, i.busyNs * 100 / span)) : 100;
      out += pad(grouped(i.count) + " x", 10, true) + " over " + duration(span) + " (busy " + std::to_string(busy) +
             "%), longest: " + i.name + " [id " + std::to_string(i.id) + "]\n";
    } else {
      out += pad(duration(i.endNs > i.startNs ? i.endNs - i.startNs : 0), 10, true) + "  " +
             std::string(recordKindName(i.kind)) + " " + i.name + " [id " + std::to_string(i.id) + "]\n";
    }
  }
  if (t.items.empty()) out += "Nothing ran in this window.\n";
  out.pop_back();
  return out;
}

std::string record(const RecordDetail& d) {
  const GpuRecord& r = d.record;
  std::string out = "  " + std::string(recordKindName(r.kind)) + " " + d.name + " [id " + std::to_string(d.id) + "]\n";
  out += "  " + duration(d.durationNs) + " from " + std::to_string(r.start) + " ns";
  if (r.kind != RecordKind::RuntimeApi && r.kind != RecordKind::DriverApi && r.kind != RecordKind::CpuOp)
    out += " on GPU " + std::to_string(r.device) + " stream " + std::to_string(r.stream);
  out += "\n";
  if (r.kind == RecordKind::Kernel) {
    out += "  grid [" + std::to_string(r.grid[0]) + ", " + std::to_string(r.grid[1]) + ", " + std::to_string(r.grid[2]) +
           "], block [" + std::to_string(r.block[0]) + ", " + std::to_string(r.block[1]) + ", " +
           std::to_string(r.block[2]) + "], " + std::to_string(r.registersPerThread) + " registers per thread, shared memory " +
           bytes(r.staticSharedMemory) + " static + " + bytes(r.dynamicSharedMemory) + " dynamic\n";
    if (d.occupancy) {
      std::string limits;
      for (const auto& l : d.occupancy->limitedBy) limits += (limits.empty() ? "" : ", ") + l;
      out += "  estimated occupancy " + std::to_string(static_cast<int>(d.occupancy->occupancy * 100 + 0.5)) + "% (" +
             std::to_string(d.occupancy->activeWarpsPerSm) + " of " + std::to_string(d.occupancy->maxWarpsPerSm) +
             " warps per SM" + (limits.empty() ? "" : ", limited by " + limits) + ")\n";
    } else if (!d.occupancyNote.empty()) {
      out += "  " + d.occupancyNote + "\n";
    }
    if (d.metrics) out += "  " + std::string(d.metrics->error.empty() ? "measured: " : "") + measured(*d.metrics) + "\n";
  }
  if (d.launch)
    out += "  launched by " + d.launch->name + " on thread " + std::to_string(d.launch->tid) + " (correlation " +
           std::to_string(r.correlation) + ")\n";
  if (d.op) out += "  in the op " + d.op->name + "\n";
  if (d.capture) {
    out += "  a CUDA graph replay's kernel: its node (" + std::to_string(d.capture->node) + ", " + d.capture->origin +
           ") was made at:\n";
    for (const auto& f : d.capture->site.python) out += "    " + f.file + ":" + std::to_string(f.line) + " in " + f.function + "\n";
  }
  if (d.attribution == SiteAttribution::Caller)
    out += "  launched by a thread with no Python frame; the Python lines are those of thread " +
           std::to_string(d.callerTid) + ", which waited in " + waitedInText(d.waitedIn) + "\n";
  if (!d.python.empty() || !d.native.empty()) {
    out += d.capture ? "  replayed from:\n" : "  from:\n";
    for (const auto& f : d.python) out += "    " + f.file + ":" + std::to_string(f.line) + " in " + f.function + "\n";
    for (std::size_t i = 0; i < d.native.size(); ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%" PRIx64, d.native[i]);
      out += std::string("    ") + buf;
      const NativeFrame* f = i < d.nativeFrames.size() ? &d.nativeFrames[i] : nullptr;
      if (f && !f->module.empty())
        out += (f->symbol.empty() ? "" : " in " + f->symbol) + " (" + f->module + ")\n";
      else
        out += " (native)\n";
    }
  } else if (r.kind == RecordKind::Kernel) {
    out += "  the launching line is not known (no launch site was recorded for it)\n";
  }
  out.pop_back();
  return out;
}

std::string table(const SqlResult& r) {
  std::vector<std::size_t> width(r.columns.size());
  std::vector<std::vector<std::string>> cells;
  auto chars = [](const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (std::size_t c = 0; c < r.columns.size(); ++c) width[c] = chars(r.columns[c]);
  for (const auto& row : r.rows) {
    cells.emplace_back();
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      std::string text = sqlText(row[c]);
      for (auto& ch : text)
        if (ch == '\n' || ch == '\t') ch = ' ';
      width[c] = std::min<std::size_t>(std::max(width[c], chars(text)), 80);
      cells.back().push_back(std::move(text));
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& values) {
    std::string l;
    for (std::size_t c = 0; c < values.size(); ++c) l += (c ? "  " : "") + pad(values[c], width[c]);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(r.columns);
  std::vector<std::string> rule;
  for (auto w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& row : cells) line(row);
  out += "(" + grouped(r.rows.size()) + (r.rows.size() == 1 ? " row" : " rows") +
         (r.truncated ? "; more were left out)" : ")");
  return out;
}

namespace {

std::int64_t cellInt(const SqlValue& v) { return std::holds_alternative<std::int64_t>(v) ? std::get<std::int64_t>(v) : 0; }

std::string baseName(const std::string& path) { return path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1); }

// The line that launched a kernel: its innermost Python frame, else the innermost native frame
// with a source line outside the collector and the system.
std::string launchLine(const RecordDetail& d) {
  if (!d.python.empty()) return baseName(d.python.front().file) + ":" + std::to_string(d.python.front().line) + " (" + d.python.front().function + ")";
  for (const auto& f : d.nativeFrames)
    if (!f.file.empty() && f.line > 0 && f.file.rfind("/usr/", 0) != 0 && f.module.find("strata_cupti") == std::string::npos)
      return baseName(f.file) + ":" + std::to_string(f.line) + " (" + f.function + ")";
  return "";
}

// "3.2 ms before the stop"
std::string before(std::uint64_t ns, std::uint64_t stopNs) {
  return ns >= stopNs ? "after the stop" : duration(stopNs - ns) + " before the stop";
}

}  // namespace

Result<std::string> crashContext(Store& store, std::uint32_t pid, std::uint32_t tid, std::uint64_t stopNs) {
  constexpr int kPerStream = 3, kCalls = 5, kStreams = 16;
  constexpr std::uint64_t kWindowNs = 2'000'000'000;  // where to look first: the track's last 2 s
  auto tracks = store.sql("SELECT id, kind, device, stream, tid, end_ns FROM tracks WHERE pid = " + std::to_string(pid) +
                              " AND (kind = 'gpu' AND kernels > 0 OR kind = 'cpu' AND tid = " + std::to_string(tid) +
                              ") ORDER BY end_ns DESC",
                          256);
  if (!tracks) return tracks.takeError();
  // The newest rows of one track's table, looked for in its last seconds first (the chunk index
  // answers that), then anywhere.
  auto newest = [&](const std::string& table, const std::string& columns, std::int64_t track, std::int64_t endNs,
                    int limit) -> Result<SqlResult> {
    std::string base = "SELECT " + columns + " FROM " + table + " WHERE track = " + std::to_string(track);
    std::string order = " ORDER BY start_ns DESC LIMIT " + std::to_string(limit);
    if (endNs > static_cast<std::int64_t>(kWindowNs)) {
      auto r = store.sql(base + " AND start_ns >= " + std::to_string(endNs - static_cast<std::int64_t>(kWindowNs)) + order, limit);
      if (!r || !r->rows.empty()) return r;
    }
    return store.sql(base + order, limit);
  };
  std::string streams, calls;
  int streamCount = 0, moreStreams = 0;
  for (const auto& row : tracks->rows) {
    const std::string kind = sqlText(row[1]);
    if (kind == "gpu") {
      if (streamCount >= kStreams) {
        ++moreStreams;
        continue;
      }
      auto kernels = newest("kernels", "id, start_ns, end_ns", cellInt(row[0]), cellInt(row[5]), kPerStream);
      if (!kernels) return kernels.takeError();
      if (kernels->rows.empty()) continue;
      ++streamCount;
      streams += "  GPU " + std::to_string(cellInt(row[2])) + " stream " + std::to_string(cellInt(row[3])) + ", the last first:\n";
      for (const auto& k : kernels->rows) {
        auto detail = store.kernel(static_cast<std::uint64_t>(cellInt(k[0])));
        if (!detail) return detail.takeError();
        const auto start = static_cast<std::uint64_t>(cellInt(k[1])), end = static_cast<std::uint64_t>(cellInt(k[2]));
        streams += "    " + detail->name + " [id " + std::to_string(detail->id) + "]";
        if (std::string line = launchLine(*detail); !line.empty()) streams += " launched at " + line;
        if (start && end) streams += ", ran " + duration(end - start) + ", ended " + before(end, stopNs);
        streams += "\n";
      }
    } else if (calls.empty()) {
      auto api = newest("api", "name, result, start_ns", cellInt(row[0]), cellInt(row[5]), kCalls);
      if (!api) return api.takeError();
      for (const auto& a : api->rows) {
        calls += "    " + sqlText(a[0]);
        if (cellInt(a[1]) != 0) calls += " returned " + std::to_string(cellInt(a[1]));
        if (cellInt(a[2])) calls += ", " + before(static_cast<std::uint64_t>(cellInt(a[2])), stopNs);
        calls += "\n";
      }
    }
  }
  if (streams.empty() && calls.empty()) return std::string();
  std::string out = "GPU at the crash (what the collector had delivered; work still in CUPTI's buffers is not here):\n";
  out += streams.empty() ? "  no kernel of this process was recorded\n" : streams;
  if (moreStreams) out += "  ... and " + std::to_string(moreStreams) + " more streams (!gpu timeline)\n";
  out += calls.empty() ? "  thread " + std::to_string(tid) + " made no CUDA call that was recorded (API records: STRATA_GPU_API=launches)\n"
                       : "  thread " + std::to_string(tid) + "'s last CUDA calls, the last first:\n" + calls;
  out.pop_back();
  return out;
}

Result<std::string> run(Store& store, std::string_view line) {
  auto w = words(line);
  if (w.empty()) return usage("!gpu top|kernel|timeline|crash|start|stop, or !sql SELECT ...");
  if (w[0] == "sql") {
    std::string_view query = after(line, 1);
    if (query.empty()) return usage("!sql SELECT ... (one read-only statement over the store's tables)");
    auto r = store.sql(query, 200);
    if (!r) return r.takeError();
    return table(*r);
  }
  if (w[0] != "gpu" || w.size() < 2) return usage("!gpu top [N] | !gpu kernel NAME | !gpu timeline [START END] | !gpu crash");
  if (w[1] == "top") {
    std::uint64_t n = 10;
    if (w.size() > 3) return usage("!gpu top [N]");
    if (w.size() == 3) {
      auto v = number(w[2]);
      if (!v || *v < 1 || *v > 1000) return usage("!gpu top [N] (N: how many kernels, 1 to 1000)");
      n = *v;
    }
    auto s = store.summary(n);
    if (!s) return s.takeError();
    return summary(*s);
  }
  if (w[1] == "kernel") {
    std::string_view name = after(line, 2);
    if (name.empty()) return usage("!gpu kernel NAME (a kernel's name, or part of it)");
    return kernelReport(store, name);
  }
  if (w[1] == "timeline") {
    ActivityCounts c = store.counts();
    std::uint64_t start = c.timeSpan.startNs, end = std::max(c.timeSpan.endNs, c.timeSpan.startNs + 1);
    if (w.size() == 4) {
      auto s = number(w[2]), e = number(w[3]);
      if (!s || !e || *e <= *s) return usage("!gpu timeline [START END] (absolute ns, END after START)");
      start = *s;
      end = *e;
    } else if (w.size() != 2) {
      return usage("!gpu timeline [START END]");
    }
    auto t = store.timeline(start, end, 60);
    if (!t) return t.takeError();
    return timeline(*t);
  }
  return usage("!gpu top [N] | !gpu kernel NAME | !gpu timeline [START END] | !gpu start [trace|stacks] | !gpu stop");
}

}  // namespace strata::cuda::text
