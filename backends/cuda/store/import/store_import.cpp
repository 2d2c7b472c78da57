// Strata's own store files: opened as they are, or merged into another store (names and
// launch sites remapped); and the format detection that picks an importer.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "../chunk_codec.hpp"
#include "../sqlite.hpp"
#include "input.hpp"
#include "strata/cuda/import.hpp"

namespace strata::cuda {

using namespace store_errors;

std::string_view traceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::KinetoJson: return "kineto-json";
    case TraceFormat::KinetoJsonGz: return "kineto-json-gz";
    case TraceFormat::NsysSqlite: return "nsys-sqlite";
    case TraceFormat::StrataStore: return "strata-store";
    case TraceFormat::Unknown: break;
  }
  return "unknown";
}

Result<TraceFormat> detectTraceFormat(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return errnoError(kIo, "open " + path, errno);
  char raw[16] = {};
  std::size_t n = std::fread(raw, 1, sizeof raw, f);
  std::fclose(f);
  auto unknown = Error{kMalformed, path + ": not a trace Strata reads (torch.profiler/Kineto JSON or .json.gz, "
                                          "an Nsight Systems SQLite export, a Strata store)", true};
  if (n >= 16 && std::memcmp(raw, "SQLite format 3", 16) == 0) {
    auto db = sql::Db::open(path, SQLITE_OPEN_READONLY, kIo);
    if (!db) return db.takeError();
    auto st = sql::Stmt::prepare(*db, "SELECT name FROM sqlite_master WHERE type='table'", kMalformed, false);
    if (!st) return Error{kMalformed, path + ": " + st.error().message, true};
    bool meta = false, nsys = false;
    while (st->step() == SQLITE_ROW) {
      std::string_view t = st->text(0);
      meta = meta || t == "meta";
      nsys = nsys || t.starts_with("CUPTI_ACTIVITY_KIND_") || t == "NVTX_EVENTS";
    }
    if (meta) {
      auto m = sql::Stmt::prepare(*db, "SELECT value FROM meta WHERE key='format'", kMalformed, false);
      if (m && m->step() == SQLITE_ROW && m->text(0) == "strata-gpu-store") return TraceFormat::StrataStore;
    }
    if (nsys) return TraceFormat::NsysSqlite;
    return unknown;
  }
  bool gz = n >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b;
  std::string text;
  if (gz) {
    auto h = input::head(path, 256);
    if (!h) return h.takeError();
    text = *h;
  } else {
    text.assign(raw, n);
  }
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '{' || c == '[') return gz ? TraceFormat::KinetoJsonGz : TraceFormat::KinetoJson;
    break;
  }
  return unknown;
}

Error importCancelled(const std::string& path) {
  return Error{errors::kCancelled, path + ": the import was cancelled (nothing of it was kept)", false};
}

Result<ImportReport> importStore(const std::string& path, Store& store, const ImportProgress& progress) {
  char a[PATH_MAX], b[PATH_MAX];
  if (realpath(path.c_str(), a) && realpath(store.path().c_str(), b) && std::strcmp(a, b) == 0) {
    return Error{kBadArgument, path + ": a store cannot be imported into itself", true};
  }
  auto db = sql::Db::open(path, SQLITE_OPEN_READONLY, kIo);
  if (!db) return db.takeError();
  {
    auto m = sql::Stmt::prepare(*db, "SELECT value FROM meta WHERE key='format'", kNotAStore, false);
    if (!m || m->step() != SQLITE_ROW || m->text(0) != "strata-gpu-store") {
      return Error{kNotAStore, path + ": not a Strata GPU store", true};
    }
  }
  ImportReport report;
  report.format = TraceFormat::StrataStore;
  auto fail = [&](const std::string& what) { return Error{kMalformed, path + ": " + what + ": " + db->message(), true}; };
  auto names = sql::Stmt::prepare(*db, "SELECT text FROM strings WHERE id=?", kMalformed);
  if (!names) return Error{kMalformed, path + ": " + names.error().message, true};
  std::unordered_map<std::uint32_t, std::uint32_t> remap{{0, 0}};
  auto nameOf = [&](std::uint32_t id) {
    if (auto it = remap.find(id); it != remap.end()) return it->second;
    std::uint32_t out = 0;
    names->bind(1, id);
    if (names->step() == SQLITE_ROW) out = store.internName(names->text(0));
    names->reset();
    if (remap.size() > (1u << 20)) remap.clear();
    remap[id] = out;
    return out;
  };
  Result<void> result = store.atomically([&]() -> Result<void> {
    {
      auto st = sql::Stmt::prepare(*db, "SELECT * FROM devices", kMalformed, false);
      if (!st) return fail("devices");
      while (st->step() == SQLITE_ROW) {
        DeviceProperties p;
        p.device = static_cast<std::uint32_t>(st->i64(0));
        p.name = std::string(st->text(1));
        p.computeMajor = static_cast<int>(st->i64(2));
        p.computeMinor = static_cast<int>(st->i64(3));
        p.smCount = static_cast<int>(st->i64(4));
        p.maxThreadsPerBlock = static_cast<int>(st->i64(5));
        p.maxThreadsPerMultiprocessor = static_cast<int>(st->i64(6));
        p.maxBlocksPerMultiprocessor = static_cast<int>(st->i64(7));
        p.regsPerBlock = static_cast<int>(st->i64(8));
        p.regsPerMultiprocessor = static_cast<int>(st->i64(9));
        p.warpSize = static_cast<int>(st->i64(10));
        p.sharedMemPerBlock = st->u64(11);
        p.sharedMemPerMultiprocessor = st->u64(12);
        p.sharedMemPerBlockOptin = st->u64(13);
        p.reservedSharedMemPerBlock = st->u64(14);
        p.totalGlobalMem = st->u64(15);
        p.source = std::string(st->text(16));
        if (auto r = store.setDeviceProperties(p); !r) return r;
        ++report.devices;
      }
    }
    {
      // Measured hardware metrics (a store written before they were kept has none).
      auto km = sql::Stmt::prepare(*db, "SELECT pid,correlation,kernel,device,request,time_ns,passes,sm_throughput_pct,"
                                        "dram_throughput_pct,achieved_occupancy_pct,duration_ns,error,result FROM kernel_metrics ORDER BY id",
                                   kMalformed, false);
      auto real = [&](int c) -> std::optional<double> {
        if (km->isNull(c)) return std::nullopt;
        return sqlite3_column_double(km->get(), c);
      };
      while (km && km->step() == SQLITE_ROW) {
        KernelMetrics k{.pid = static_cast<std::uint32_t>(km->i64(0)), .correlation = static_cast<std::uint32_t>(km->i64(1)),
                        .device = static_cast<std::uint32_t>(km->i64(3)), .request = static_cast<std::uint32_t>(km->i64(4)),
                        .kernel = std::string(km->text(2)), .timeNs = km->u64(5),
                        .passes = static_cast<std::uint32_t>(km->i64(6)), .smThroughputPct = real(7),
                        .dramThroughputPct = real(8), .achievedOccupancyPct = real(9), .durationNs = real(10),
                        .error = std::string(km->text(11)), .result = static_cast<std::int32_t>(km->i64(12))};
        if (auto r = store.addKernelMetrics(k); !r) return r;
      }
    }
    {
      // Resolved native frames, by site (a store written before they were kept has none); they
      // complete the function, file and line site_frames holds with the collector's module
      // address and symbol.
      std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<NativeFrame>> resolved;
      if (auto nf = sql::Stmt::prepare(*db, "SELECT pid,site,module,module_address,symbol FROM native_frames ORDER BY pid,site,depth",
                                       kMalformed, false)) {
        while (nf->step() == SQLITE_ROW) {
          resolved[{static_cast<std::uint32_t>(nf->i64(0)), static_cast<std::uint32_t>(nf->i64(1))}].push_back(
              NativeFrame{0, nf->u64(3), std::string(nf->text(2)), std::string(nf->text(4))});
        }
      }
      auto add = [&](LaunchSite& site) -> Result<void> {
        if (auto it = resolved.find({site.pid, site.id}); it != resolved.end() && it->second.size() == site.native.size()) {
          if (site.nativeFrames.size() != site.native.size()) site.nativeFrames.assign(site.native.size(), NativeFrame{});
          for (std::size_t i = 0; i < site.native.size(); ++i) {
            NativeFrame& out = site.nativeFrames[i];
            out.pc = site.native[i];
            out.elfAddress = it->second[i].elfAddress;
            out.symbol = it->second[i].symbol;
            if (out.module.empty()) out.module = it->second[i].module;
          }
        }
        return store.addLaunchSite(site);
      };
      auto st = sql::Stmt::prepare(*db, "SELECT pid,site,kind,function,file,line,address,module FROM site_frames ORDER BY pid,site,kind,depth", kMalformed, false);
      if (!st)  // format 1: no module column
        st = sql::Stmt::prepare(*db, "SELECT pid,site,kind,function,file,line,address,NULL FROM site_frames ORDER BY pid,site,kind,depth", kMalformed, false);
      if (!st) return fail("site_frames");
      LaunchSite site;
      bool open = false;
      int rc;
      while ((rc = st->step()) == SQLITE_ROW) {
        auto pid = static_cast<std::uint32_t>(st->i64(0));
        auto id = static_cast<std::uint32_t>(st->i64(1));
        if (open && (site.pid != pid || site.id != id)) {
          if (auto r = add(site); !r) return r;
          site = LaunchSite{};
        }
        open = true;
        site.pid = pid;
        site.id = id;
        if (st->text(2) == "python") {
          site.python.push_back(PythonFrame{std::string(st->text(3)), std::string(st->text(4)), static_cast<int>(st->i64(5))});
        } else {
          site.native.push_back(st->u64(6));
          NativeFrame n;
          n.pc = st->u64(6);
          n.function = std::string(st->text(3));
          n.file = std::string(st->text(4));
          n.line = static_cast<int>(st->i64(5));
          n.module = std::string(st->text(7));
          site.nativeFrames.push_back(std::move(n));
        }
      }
      if (rc != SQLITE_DONE) return fail("site_frames");
      if (open) {
        if (auto r = add(site); !r) return r;
      }
    }
    {
      auto st = sql::Stmt::prepare(*db, "SELECT pid,count FROM dropped", kMalformed, false);
      if (!st) return fail("dropped");
      while (st->step() == SQLITE_ROW) {
        if (auto r = store.addDropped(static_cast<std::uint32_t>(st->i64(0)), st->u64(1)); !r) return r;
      }
    }
    std::uint64_t chunks = 0, done = 0;
    if (progress) {
      auto n = sql::Stmt::prepare(*db, "SELECT count(*) FROM chunks", kMalformed, false);
      if (n && n->step() == SQLITE_ROW) chunks = n->u64(0);
    }
    auto st = sql::Stmt::prepare(*db, "SELECT id,data FROM chunks ORDER BY id", kMalformed, false);
    if (!st) return fail("chunks");
    std::vector<GpuRecord> recs;
    int rc;
    while ((rc = st->step()) == SQLITE_ROW) {
      if (progress && ++done % 8 == 0 && !progress(done, chunks)) return importCancelled(path);
      if (!codec::decode(st->blob(1), codec::kAllColumns, recs)) {
        return Error{kMalformed, path + ": chunk " + std::to_string(st->i64(0)) + " is malformed", true};
      }
      report.events += recs.size();
      for (GpuRecord& r : recs) r.name = nameOf(r.name);
      if (auto r = store.ingest(recs); !r) return r;
      report.records += recs.size();
    }
    if (rc != SQLITE_DONE) return fail("chunks");
    return {};
  });
  if (!result) return result.takeError();
  return report;
}

Result<ImportReport> importTrace(const std::string& path, Store& store, const ImportProgress& progress) {
  auto format = detectTraceFormat(path);
  if (!format) return format.takeError();
  switch (*format) {
    case TraceFormat::KinetoJson:
    case TraceFormat::KinetoJsonGz: return importKineto(path, store, progress);
    case TraceFormat::NsysSqlite: return importNsys(path, store, progress);
    case TraceFormat::StrataStore: return importStore(path, store, progress);
    case TraceFormat::Unknown: break;
  }
  return Error{kMalformed, path + ": not a trace Strata reads", true};
}

Result<OpenedTrace> openTrace(const std::string& path, const std::string& storePath, const ImportProgress& progress) {
  auto format = detectTraceFormat(path);
  if (!format) return format.takeError();
  OpenedTrace out;
  out.report.format = *format;
  if (*format == TraceFormat::StrataStore) {
    auto s = Store::open(path);
    if (!s) s = Store::open(path, StoreOptions{.readOnly = true});  // a file the user may not write
    if (!s) return s.takeError();
    out.store = std::move(*s);
    out.report.records = out.store->counts().records;
    return out;
  }
  auto s = Store::create(storePath);
  if (!s) return s.takeError();
  auto report = importTrace(path, **s, progress);
  if (!report) {
    (*s).reset();
    std::remove(storePath.c_str());
    return report.takeError();
  }
  if (auto r = (*s)->setMeta("imported_from", path); !r) return r.takeError();
  if (auto r = (*s)->setMeta("imported_format", traceFormatName(*format)); !r) return r.takeError();
  if (auto r = (*s)->flush(); !r) return r.takeError();
  out.store = std::move(*s);
  out.report = std::move(*report);
  return out;
}

}  // namespace strata::cuda
