// `strata gpu top|kernel|timeline|sql|export`: queries over a Strata GPU store or any trace the
// importers read (imported into a temporary store first), as text or as the JSON bodies of the
// custom DAP requests (--json).
#include "adapter/cli/gpu.hpp"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include <boost/json/serialize.hpp>

#include "strata/cuda/import.hpp"
#include "strata/cuda/store_json.hpp"

namespace strata::cli {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace strata::cuda;

namespace {

const char* kGpuUsage = R"(usage: strata gpu run [--trace|--stacks|--off] [--store FILE] [--profile NAME[:N]] -- PROGRAM [ARGS...]
         runs PROGRAM with Strata's CUDA collector injected (its children too), collects its GPU
         activity into a store file (default ./strata-gpu-PROGRAM-DATE-TIME.strata), prints a
         summary at the end, and exits with PROGRAM's exit code. --stacks also records the
         Python and native lines that launched each kernel; --trace (the default) does not.
         --profile measures SM and DRAM throughput, achieved occupancy and GPU time of the
         next N launches (default 1, at most 64) of kernels whose names contain NAME.
       strata gpu top [N] [--json] FILE
       strata gpu kernel NAME|ID [--json] FILE
       strata gpu timeline [--start NS] [--end NS] [--max N] [--json] FILE
       strata gpu sql "SELECT ..." [--max-rows N] [--json] FILE
       strata gpu export [--format chrome|perfetto] [--json] FILE OUT
FILE is a Strata GPU store (.strata), a torch.profiler/Kineto trace (.json, .json.gz) or an
Nsight Systems SQLite export (.sqlite). --json prints the body of the matching DAP request
(gpuSummary, gpuKernel, gpuTimeline, the !sql table, gpuExport). Times are nanoseconds.
)";

int usage(const std::string& message) {
  std::fprintf(stderr, "strata: gpu: %s\n%s", message.c_str(), kGpuUsage);
  return 2;
}

int fail(const std::string& command, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "strata: gpu %s: %s\n", command.c_str(), message.c_str());
  return 1;
}

void printJson(const json::value& v) {
  std::string s = json::serialize(v);
  s += '\n';
  std::fwrite(s.data(), 1, s.size(), stdout);
}

std::optional<std::uint64_t> number(const std::string& s) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::strtoull(s.c_str(), nullptr, 10);
}

std::string cut(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n - 3) + "...";
}

// The arguments of one query: --json, options that take a value, positional words.
struct Args {
  bool json = false;
  std::map<std::string, std::string> options;
  std::vector<std::string> words;
};

Result<Args> parse(const std::vector<std::string>& in, const std::vector<std::string>& valued) {
  Args a;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::string& s = in[i];
    if (s == "--json") a.json = true;
    else if (std::find(valued.begin(), valued.end(), s) != valued.end()) {
      if (i + 1 >= in.size()) return Error{errors::kBadArguments, s + " needs a value", true};
      a.options[s] = in[++i];
    } else if (s.size() > 1 && s[0] == '-' && !number(s.substr(1))) {
      return Error{errors::kBadArguments, "unknown option '" + s + "'", true};
    } else {
      a.words.push_back(s);
    }
  }
  return a;
}

// A store to query: the file itself when it is a Strata store, else a temporary store the
// trace is imported into (removed when this goes).
struct Opened {
  std::unique_ptr<Store> store;
  std::string tempDir;
  ImportReport report;
  ~Opened() {
    store.reset();
    std::error_code ec;
    if (!tempDir.empty()) fs::remove_all(tempDir, ec);
  }
};

Result<std::unique_ptr<Opened>> openFile(const std::string& path) {
  auto format = detectTraceFormat(path);
  if (!format) return format.takeError();
  auto o = std::make_unique<Opened>();
  if (*format == TraceFormat::StrataStore) {
    auto s = Store::open(path, StoreOptions{.readOnly = true});
    if (!s) return s.takeError();
    o->store = std::move(*s);
    o->report.format = *format;
    return o;
  }
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/strata-gpu-query-XXXXXX";
  if (!mkdtemp(tmpl.data())) return errnoError(errors::kStoreIo, "make a temporary directory " + tmpl);
  o->tempDir = tmpl;
  auto t = openTrace(path, tmpl + "/imported.strata");
  if (!t) return t.takeError();
  o->store = std::move(t->store);
  o->report = t->report;
  return o;
}

std::string kindLabel(const TimelineItem& item) {
  return item.count > 1 ? std::string(" x") + std::to_string(item.count) : std::string(recordKindName(item.kind));
}

int top(const std::vector<std::string>& in) {
  auto a = parse(in, {});
  if (!a) return usage(a.error().message);
  std::size_t limit = 10;
  std::string file;
  for (const auto& w : a->words) {
    if (auto n = number(w); n && file.empty() && a->words.size() == 2) limit = std::max<std::uint64_t>(*n, 1);
    else if (file.empty()) file = w;
    else return usage("top takes [N] FILE");
  }
  if (file.empty()) return usage("top needs a FILE");
  auto o = openFile(file);
  if (!o) return fail("top", o.error().message);
  auto s = (*o)->store->summary(limit);
  if (!s) return fail("top", s.error().message);
  if (a->json) printJson(toJson(*s));
  else {
    std::printf("GPU summary of %s (%s)\n", file.c_str(), std::string(traceFormatName((*o)->report.format)).c_str());
    // What an import left out is said, so a trace that yields nothing never looks empty.
    for (const auto& [why, n] : (*o)->report.skipped)
      std::printf("  %llu %s skipped (%s)\n", static_cast<unsigned long long>(n), n == 1 ? "event" : "events", why.c_str());
    printSummary(stdout, *s);
  }
  return 0;
}

int kernel(const std::vector<std::string>& in) {
  auto a = parse(in, {});
  if (!a) return usage(a.error().message);
  if (a->words.size() != 2) return usage("kernel takes NAME|ID FILE");
  const std::string& which = a->words[0];
  auto o = openFile(a->words[1]);
  if (!o) return fail("kernel", o.error().message);
  Store& store = *(*o)->store;
  std::uint64_t id = 0;
  std::string matchedName;
  if (auto n = number(which)) {
    id = *n;
  } else {
    // Exact demangled or mangled name first, then a unique part of one.
    auto names = store.sql("SELECT s.id, coalesce(s.demangled, s.text), s.text FROM kernel_stats k JOIN strings s ON s.id = k.name", 1000000);
    if (!names) return fail("kernel", names.error().message);
    std::vector<std::pair<std::int64_t, std::string>> exact, partial;
    for (const auto& row : names->rows) {
      const auto nameId = std::get<std::int64_t>(row[0]);
      const auto& demangled = std::get<std::string>(row[1]);
      const auto& mangled = std::get<std::string>(row[2]);
      if (demangled == which || mangled == which) exact.emplace_back(nameId, demangled);
      else if (demangled.find(which) != std::string::npos) partial.emplace_back(nameId, demangled);
    }
    const auto& pick = exact.empty() ? partial : exact;
    if (pick.empty()) return fail("kernel", "no kernel named or containing '" + which + "' in " + a->words[1]);
    if (pick.size() > 1) {
      std::string list;
      for (std::size_t i = 0; i < pick.size() && i < 10; ++i) list += "\n  " + pick[i].second;
      if (pick.size() > 10) list += "\n  ... (" + std::to_string(pick.size() - 10) + " more)";
      return fail("kernel", std::to_string(pick.size()) + " kernel names contain '" + which + "'; name one:" + list);
    }
    matchedName = pick[0].second;
    auto longest = store.sql("SELECT id FROM kernels WHERE name_id = " + std::to_string(pick[0].first) +
                                 " ORDER BY duration_ns DESC LIMIT 1", 1);
    if (!longest) return fail("kernel", longest.error().message);
    if (longest->rows.empty()) return fail("kernel", "no launch of '" + matchedName + "' is stored");
    id = static_cast<std::uint64_t>(std::get<std::int64_t>(longest->rows[0][0]));
  }
  auto d = store.kernel(id);
  if (!d) return fail("kernel", d.error().message);
  if (a->json) {
    printJson(toJson(*d));
    return 0;
  }
  const GpuRecord& r = d->record;
  std::printf("%s #%" PRIu64 "  %s\n", std::string(recordKindName(r.kind)).c_str(), d->id, d->name.c_str());
  if (!matchedName.empty()) std::printf("  (the longest launch of this name)\n");
  if (d->mangledName != d->name) std::printf("  mangled       %s\n", d->mangledName.c_str());
  std::printf("  time          %s .. %s ns, %s\n", std::to_string(r.start).c_str(), std::to_string(r.end).c_str(),
              formatNs(d->durationNs).c_str());
  std::printf("  where         process %u, device %u, context %u, stream %u, correlation %u\n", r.pid, r.device,
              r.context, r.stream, r.correlation);
  if (r.kind == RecordKind::Kernel) {
    std::printf("  grid          (%d, %d, %d)   block (%d, %d, %d)\n", r.grid[0], r.grid[1], r.grid[2], r.block[0],
                r.block[1], r.block[2]);
    std::printf("  resources     %u registers/thread, %u B static + %u B dynamic shared memory\n",
                r.registersPerThread, r.staticSharedMemory, r.dynamicSharedMemory);
    if (d->occupancy) {
      std::string limits;
      for (const auto& l : d->occupancy->limitedBy) limits += (limits.empty() ? "" : ", ") + l;
      std::printf("  occupancy     %.1f %% estimated (%d of %d warps per SM%s%s)\n", d->occupancy->occupancy * 100,
                  d->occupancy->activeWarpsPerSm, d->occupancy->maxWarpsPerSm, limits.empty() ? "" : "; limited by ",
                  limits.c_str());
    } else {
      std::printf("  occupancy     %s\n", d->occupancyNote.c_str());
    }
    if (d->metrics && !d->metrics->error.empty()) {
      std::printf("  measured      %s\n", d->metrics->error.c_str());
    } else if (d->metrics) {
      const auto& m = *d->metrics;
      std::string line;
      auto add = [&](const char* what, const std::optional<double>& v, const char* unit) {
        if (!v) return;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%s %.1f%s", line.empty() ? "" : ", ", what, *v, unit);
        line += buf;
      };
      add("SM throughput", m.smThroughputPct, " %");
      add("DRAM throughput", m.dramThroughputPct, " %");
      add("achieved occupancy", m.achievedOccupancyPct, " %");
      add("GPU time", m.durationNs, " ns");
      std::printf("  measured      %s (%u replay passes)\n", line.c_str(), m.passes);
    }
  } else if (r.bytes) {
    std::printf("  bytes         %" PRIu64 "\n", r.bytes);
  }
  if (d->launch)
    std::printf("  launched by   %s (thread %u, %s before it started)\n", d->launch->name.c_str(), d->launch->tid,
                formatNs(r.start >= d->launch->startNs ? r.start - d->launch->startNs : 0).c_str());
  if (d->op) std::printf("  in op         %s\n", d->op->name.c_str());
  if (d->attribution == SiteAttribution::Caller)
    std::printf("  Python lines  of thread %u, which waited in %s (the launching thread runs no Python)\n", d->callerTid,
                waitedInText(d->waitedIn).c_str());
  if (d->capture) {
    std::printf("  graph node    %" PRIu64 " (%s), made at (innermost first):\n", d->capture->node, d->capture->origin.c_str());
    for (const auto& f : d->capture->site.python) std::printf("    %s  %s:%d\n", f.function.c_str(), f.file.c_str(), f.line);
    std::printf("  the replay:\n");
  }
  if (!d->python.empty()) {
    std::printf("  Python frames (innermost first):\n");
    for (const auto& f : d->python) std::printf("    %s  %s:%d\n", f.function.c_str(), f.file.c_str(), f.line);
  }
  if (!d->nativeFrames.empty()) {
    std::printf("  native frames (innermost first):\n");
    for (const auto& f : d->nativeFrames) {
      std::string at = f.file.empty() ? "" : "  " + f.file + ":" + std::to_string(f.line);
      std::string mod = f.module.empty() ? "" : "  [" + fs::path(f.module).filename().string() + "]";
      std::printf("    0x%" PRIx64 "  %s%s%s\n", f.pc, f.function.empty() ? "?" : f.function.c_str(), at.c_str(), mod.c_str());
    }
  }
  if (d->backwardOf) {
    const auto& b = *d->backwardOf;
    std::printf("  backward of   %s (thread %u; %s, sequence number %" PRId64 ")%s\n", b.forward.name.c_str(), b.forward.tid,
                b.backward.name.c_str(), b.sequenceNumber, b.python.empty() ? "" : ", whose forward ran at (innermost first):");
    for (const auto& f : b.python) std::printf("    %s  %s:%d\n", f.function.c_str(), f.file.c_str(), f.line);
  }
  if (d->python.empty() && d->nativeFrames.empty() && !(d->backwardOf && !d->backwardOf->python.empty()))
    std::printf("  launch site   %s\n", r.site ? "not stored" : "not recorded (collect with --stacks)");
  return 0;
}

int timeline(const std::vector<std::string>& in) {
  auto a = parse(in, {"--start", "--end", "--max"});
  if (!a) return usage(a.error().message);
  if (a->words.size() != 1) return usage("timeline takes [--start NS] [--end NS] [--max N] FILE");
  std::optional<std::uint64_t> start, end, max;
  for (auto [key, slot] : {std::pair{"--start", &start}, std::pair{"--end", &end}, std::pair{"--max", &max}}) {
    if (!a->options.count(key)) continue;
    *slot = number(a->options[key]);
    if (!*slot) return usage(std::string(key) + " needs a whole number, not '" + a->options[key] + "'");
  }
  auto o = openFile(a->words[0]);
  if (!o) return fail("timeline", o.error().message);
  Store& store = *(*o)->store;
  const ActivityCounts c = store.counts();
  const std::uint64_t from = start.value_or(c.timeSpan.startNs);
  const std::uint64_t to = end.value_or(c.timeSpan.endNs + 1);
  const auto items = static_cast<std::uint32_t>(std::min<std::uint64_t>(max.value_or(a->json ? 2000 : 40), 1u << 24));
  if (to <= from) return fail("timeline", "the window is empty: --end must be after --start");
  auto t = store.timeline(from, to, items);
  if (!t) return fail("timeline", t.error().message);
  if (a->json) {
    printJson(toJson(*t));
    return 0;
  }
  std::printf("GPU timeline of %s: %s .. %s ns (%s), %zu items of at most %u%s\n", a->words[0].c_str(),
              std::to_string(from).c_str(), std::to_string(to).c_str(), formatNs(to - from).c_str(), t->items.size(),
              items, t->level >= 0 ? " (neighbours merged)" : "");
  std::uint32_t track = UINT32_MAX;
  for (const TimelineItem& item : t->items) {
    if (item.track != track) {
      track = item.track;
      auto it = std::find_if(t->tracks.begin(), t->tracks.end(), [&](const Track& x) { return x.id == track; });
      std::printf("%s\n", it == t->tracks.end() ? ("track " + std::to_string(track)).c_str() : it->name.c_str());
    }
    std::printf("  +%-12s %10s  %-8s %s\n", formatNs(item.startNs >= from ? item.startNs - from : 0).c_str(),
                formatNs(item.endNs - item.startNs).c_str(), kindLabel(item).c_str(), cut(item.name, 90).c_str());
  }
  if (t->tracksOmitted) std::printf("(%" PRIu64 " tracks left out: raise --max)\n", t->tracksOmitted);
  return 0;
}

std::string cell(const SqlValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "NULL";
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  return std::get<std::string>(v);
}

int sql(const std::vector<std::string>& in) {
  auto a = parse(in, {"--max-rows"});
  if (!a) return usage(a.error().message);
  if (a->words.size() != 2) return usage("sql takes \"SELECT ...\" FILE");
  std::uint64_t maxRows = 1000;
  if (a->options.count("--max-rows")) {
    auto n = number(a->options["--max-rows"]);
    if (!n || *n == 0) return usage("--max-rows needs a positive whole number");
    maxRows = *n;
  }
  auto o = openFile(a->words[1]);
  if (!o) return fail("sql", o.error().message);
  auto r = (*o)->store->sql(a->words[0], maxRows);
  if (!r) return fail("sql", r.error().message);
  if (a->json) {
    printJson(toJson(*r));
    return 0;
  }
  std::vector<std::size_t> width(r->columns.size());
  std::vector<std::vector<std::string>> text;
  for (std::size_t c = 0; c < r->columns.size(); ++c) width[c] = r->columns[c].size();
  for (const auto& row : r->rows) {
    text.emplace_back();
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      text.back().push_back(cut(cell(row[c]), 100));
      width[c] = std::max(width[c], text.back().back().size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      s += cells[c];
      if (c + 1 < cells.size()) s += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    std::printf("%s\n", s.c_str());
  };
  line(r->columns);
  for (const auto& row : text) line(row);
  std::printf("(%zu row%s%s)\n", r->rows.size(), r->rows.size() == 1 ? "" : "s",
              r->truncated ? ", more not shown: raise --max-rows" : "");
  return 0;
}

int exportTrace(const std::vector<std::string>& in) {
  auto a = parse(in, {"--format"});
  if (!a) return usage(a.error().message);
  if (a->words.size() != 2) return usage("export takes [--format chrome|perfetto] FILE OUT");
  const std::string format = a->options.count("--format") ? a->options["--format"] : "chrome";
  if (format != "chrome" && format != "perfetto")
    return usage("--format '" + format + "': expected chrome or perfetto");
  auto o = openFile(a->words[0]);
  if (!o) return fail("export", o.error().message);
  auto r = (*o)->store->exportChrome(a->words[1]);
  if (!r) return fail("export", r.error().message);
  if (a->json) {
    json::value v = toJson(*r);
    v.as_object()["path"] = a->words[1];
    v.as_object()["format"] = "chrome";
    printJson(v);
    return 0;
  }
  std::printf("wrote %s: %" PRIu64 " events, %" PRIu64 " bytes, Chrome trace JSON (open it in ui.perfetto.dev or "
              "chrome://tracing)%s\n",
              a->words[1].c_str(), r->events, r->bytes,
              format == "perfetto" ? "; Perfetto reads this format, Strata writes no protobuf trace yet" : "");
  if (r->skippedUntimed) std::printf("%" PRIu64 " records without a start time were left out\n", r->skippedUntimed);
  return 0;
}

}  // namespace

std::string formatNs(std::uint64_t ns) {
  char buf[64];
  if (ns < 10'000) std::snprintf(buf, sizeof buf, "%" PRIu64 " ns", ns);
  else if (ns < 10'000'000) std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (ns < 10'000'000'000ull) std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  return buf;
}

void printSummary(std::FILE* out, const Summary& s) {
  const std::uint64_t span = s.timeSpan.endNs > s.timeSpan.startNs ? s.timeSpan.endNs - s.timeSpan.startNs : 0;
  std::fprintf(out, "  %" PRIu64 " records over %s (%" PRIu64 " .. %" PRIu64 " ns), %zu device%s, %zu stream%s, %" PRIu64
                    " dropped%s\n",
               s.records, formatNs(span).c_str(), s.timeSpan.startNs, s.timeSpan.endNs, s.devices.size(),
               s.devices.size() == 1 ? "" : "s", s.streams.size(), s.streams.size() == 1 ? "" : "s", s.dropped,
               s.dropped ? " (records the collector lost: the timeline has gaps)" : "");
  if (s.kernels.empty()) {
    std::fprintf(out, "  no kernels\n");
  } else {
    std::fprintf(out, "  kernels (top %zu of %" PRIu64 " names, by total time):\n", s.kernels.size(), s.kernelNames);
    std::fprintf(out, "    %10s %8s %10s %10s %10s  %s\n", "total", "count", "avg", "min", "max", "name");
    for (const auto& k : s.kernels)
      std::fprintf(out, "    %10s %8" PRIu64 " %10s %10s %10s  %s\n", formatNs(k.totalNs).c_str(), k.count,
                   formatNs(k.avgNs).c_str(), formatNs(k.minNs).c_str(), formatNs(k.maxNs).c_str(),
                   cut(k.name, 100).c_str());
  }
  if (!s.copies.empty()) {
    std::fprintf(out, "  copies:\n");
    for (const auto& c : s.copies)
      std::fprintf(out, "    %10s %8" PRIu64 " %14" PRIu64 " bytes  %s\n", formatNs(c.totalNs).c_str(), c.count, c.bytes,
                   c.kind.c_str());
  }
  if (!s.syncs.empty()) {
    std::fprintf(out, "  synchronizations:\n");
    for (const auto& c : s.syncs)
      std::fprintf(out, "    %10s %8" PRIu64 "  %s\n", formatNs(c.totalNs).c_str(), c.count, c.kind.c_str());
  }
  if (s.untimed) std::fprintf(out, "  %" PRIu64 " records had no start time (kept, not on the timeline)\n", s.untimed);
}

int gpuCommand(int argc, char** argv, int first) {
  if (first >= argc) return usage("missing command");
  const std::string sub = argv[first];
  std::vector<std::string> rest(argv + first + 1, argv + argc);
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kGpuUsage, stdout);
    return 0;
  }
  if (sub == "run") return gpuRun(rest);
  if (sub == "top") return top(rest);
  if (sub == "kernel") return kernel(rest);
  if (sub == "timeline") return timeline(rest);
  if (sub == "sql") return sql(rest);
  if (sub == "export") return exportTrace(rest);
  return usage("unknown command '" + sub + "'");
}

}  // namespace strata::cli
