// Nsight Systems SQLite exports (nsys export --type sqlite): the CUPTI activity tables, NVTX
// ranges and GPU properties, read column by column by name (columns vary between versions).
#include <functional>
#include <set>
#include <unordered_map>

#include "../sqlite.hpp"
#include "strata/cuda/import.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

struct Column {
  const char* name;
  std::function<void(GpuRecord&, sql::Stmt&, int)> set;
};

class NsysReader {
 public:
  NsysReader(const std::string& path, sql::Db& db, Store& store, ImportReport& report, const ImportProgress& progress)
      : path_(path), db_(db), store_(store), report_(report), progress_(progress) {}

  // The rows of the tables read, for progress (counted only when someone asks).
  void countRows(const std::vector<std::string>& tables) {
    if (!progress_) return;
    for (const auto& t : tables) {
      if (!has(t.c_str())) continue;
      auto s = sql::Stmt::prepare(db_, "SELECT count(*) FROM \"" + t + "\"", kMalformed, false);
      if (s && s->step() == SQLITE_ROW) total_ += s->u64(0);
    }
  }

  Result<void> prepare() {
    auto t = sql::Stmt::prepare(db_, "SELECT name FROM sqlite_master WHERE type='table'", kMalformed, false);
    if (!t) return Error{kMalformed, path_ + ": reading the schema: " + db_.message(), true};
    int rc;
    while ((rc = t->step()) == SQLITE_ROW) tables_.insert(std::string(t->text(0)));
    if (rc != SQLITE_DONE) return Error{kMalformed, path_ + ": reading the schema: " + db_.message(), true};
    if (tables_.count("StringIds")) {
      auto s = sql::Stmt::prepare(db_, "SELECT value FROM StringIds WHERE id=?", kMalformed);
      if (!s) return Error{kMalformed, path_ + ": StringIds: " + s.error().message, true};
      strings_ = std::move(*s);
    }
    if (tables_.count("TARGET_INFO_SESSION_START_TIME") && columns("TARGET_INFO_SESSION_START_TIME").count("utcEpochNs")) {
      auto s = sql::Stmt::prepare(db_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", kMalformed, false);
      if (s && s->step() == SQLITE_ROW) offset_ = s->i64(0);
    }
    return {};
  }

  bool has(const char* table) const { return tables_.count(table) != 0; }

  std::set<std::string> columns(const std::string& table) {
    std::set<std::string> out;
    auto s = sql::Stmt::prepare(db_, "SELECT name FROM pragma_table_info(?)", kMalformed, false);
    if (!s) return out;
    s->bindText(1, table);
    while (s->step() == SQLITE_ROW) out.insert(std::string(s->text(0)));
    return out;
  }

  struct Name {
    std::uint32_t id = 0;
    bool driverApi = false;  // cu* but not cuda*: a driver call
  };
  // The store's id for an nsys StringIds id.
  Name lookup(std::int64_t id) {
    if (!strings_ || id == 0) return {};
    if (auto it = names_.find(id); it != names_.end()) return it->second;
    Name out;
    strings_.bind(1, id);
    if (strings_.step() == SQLITE_ROW) {
      std::string_view t = strings_.text(0);
      out.id = store_.internName(t);
      out.driverApi = t.starts_with("cu") && !t.starts_with("cuda");
    }
    strings_.reset();
    if (names_.size() > (1u << 20)) names_.clear();
    names_.emplace(id, out);
    return out;
  }
  std::uint32_t name(std::int64_t id) { return lookup(id).id; }

  static std::uint32_t pidOf(std::int64_t globalId) { return static_cast<std::uint32_t>((globalId >> 24) & 0xFFFFFF); }
  static std::uint32_t tidOf(std::int64_t globalId) { return static_cast<std::uint32_t>(globalId & 0xFFFFFF); }

  std::uint64_t time(std::int64_t t) const {
    std::int64_t v = t + offset_;
    return v > 0 ? static_cast<std::uint64_t>(v) : 0;
  }

  // Reads every row of `table` into records of `kind`: the columns in `wanted` that the table
  // has, plus `filter` to drop rows. Requires start.
  Result<void> read(const std::string& table, RecordKind kind, const std::vector<Column>& wanted,
                    const std::function<bool(sql::Stmt&, const std::vector<int>&)>& filter = {}) {
    if (!has(table.c_str())) return {};
    auto present = columns(table);
    if (!present.count("start")) return Error{kMalformed, path_ + ": table " + table + " has no start column", true};
    std::string q = "SELECT start";
    std::vector<const Column*> used;
    std::vector<int> index(wanted.size(), -1);
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      if (!present.count(wanted[i].name)) continue;
      index[i] = static_cast<int>(used.size()) + 1;
      used.push_back(&wanted[i]);
      q += std::string(",\"") + wanted[i].name + "\"";
    }
    q += " FROM \"" + table + "\"";
    auto st = sql::Stmt::prepare(db_, q, kMalformed, false);
    if (!st) return Error{kMalformed, path_ + ": table " + table + ": " + st.error().message, true};
    std::vector<GpuRecord> batch;
    batch.reserve(8192);
    std::uint64_t row = 0;
    int rc;
    while ((rc = st->step()) == SQLITE_ROW) {
      ++row;
      ++report_.events;
      if (filter && !filter(*st, index)) {
        ++report_.skipped[table + " rows without a usable event"];
        continue;
      }
      GpuRecord r;
      r.kind = kind;
      r.start = time(st->i64(0));
      r.end = r.start;
      for (std::size_t i = 0; i < used.size(); ++i) {
        if (!st->isNull(static_cast<int>(i) + 1)) used[i]->set(r, *st, static_cast<int>(i) + 1);
      }
      if (r.start == 0) r.end = 0;
      batch.push_back(r);
      if (batch.size() == 8192) {
        if (auto x = store_.ingest(batch); !x) return x;
        report_.records += batch.size();
        batch.clear();
      }
      if (++done_ % 8192 == 0 && progress_ && !progress_(done_, total_)) return importCancelled(path_);
    }
    if (rc != SQLITE_DONE) {
      return Error{kMalformed, path_ + ": table " + table + ", row " + std::to_string(row + 1) + ": " + db_.message(), true};
    }
    if (auto x = store_.ingest(batch); !x) return x;
    report_.records += batch.size();
    return {};
  }

  Result<void> devices() {
    if (!has("TARGET_INFO_GPU")) return {};
    auto present = columns("TARGET_INFO_GPU");
    auto st = sql::Stmt::prepare(db_, "SELECT * FROM TARGET_INFO_GPU", kMalformed, false);
    if (!st) return Error{kMalformed, path_ + ": TARGET_INFO_GPU: " + st.error().message, true};
    std::unordered_map<std::string, int> col;
    for (int i = 0; i < sqlite3_column_count(st->get()); ++i) col[sqlite3_column_name(st->get(), i)] = i;
    auto get = [&](const char* n) -> std::int64_t {
      auto it = col.find(n);
      return it == col.end() || st->isNull(it->second) ? 0 : st->i64(it->second);
    };
    int rc;
    while ((rc = st->step()) == SQLITE_ROW) {
      DeviceProperties p;
      p.source = "nsys";
      p.device = static_cast<std::uint32_t>(col.count("cuDevice") && !st->isNull(col["cuDevice"]) ? get("cuDevice") : get("id"));
      if (col.count("name")) p.name = std::string(st->text(col["name"]));
      p.computeMajor = static_cast<int>(get("computeMajor"));
      p.computeMinor = static_cast<int>(get("computeMinor"));
      p.smCount = static_cast<int>(get("smCount"));
      p.maxThreadsPerBlock = static_cast<int>(get("maxThreadsPerBlock"));
      p.warpSize = static_cast<int>(get("threadsPerWarp"));
      p.maxThreadsPerMultiprocessor = static_cast<int>(get("maxWarpsPerSm") * p.warpSize);
      p.maxBlocksPerMultiprocessor = static_cast<int>(get("maxBlocksPerSm"));
      p.regsPerBlock = static_cast<int>(get("maxRegistersPerBlock"));
      p.regsPerMultiprocessor = static_cast<int>(get("maxRegistersPerSm"));
      p.sharedMemPerBlock = static_cast<std::uint64_t>(get("maxShmemPerBlock"));
      p.sharedMemPerMultiprocessor = static_cast<std::uint64_t>(get("maxShmemPerSm"));
      p.sharedMemPerBlockOptin = static_cast<std::uint64_t>(get("maxShmemPerBlockOptin"));
      p.totalGlobalMem = static_cast<std::uint64_t>(get("totalMemory"));
      if (auto r = store_.setDeviceProperties(p); !r) return r;
      ++report_.devices;
    }
    if (rc != SQLITE_DONE) return Error{kMalformed, path_ + ": TARGET_INFO_GPU: " + db_.message(), true};
    return {};
  }

 private:
  std::string path_;
  sql::Db& db_;
  Store& store_;
  ImportReport& report_;
  const ImportProgress& progress_;
  std::uint64_t done_ = 0, total_ = 0;  // rows read and to read, for progress
  std::set<std::string> tables_;
  sql::Stmt strings_;
  std::unordered_map<std::int64_t, Name> names_;
  std::int64_t offset_ = 0;
};

using R = GpuRecord;
using S = sql::Stmt;

Column u32(const char* name, std::uint32_t R::*field) {
  return {name, [field](R& r, S& s, int c) { r.*field = static_cast<std::uint32_t>(s.i64(c)); }};
}
Column u64(const char* name, std::uint64_t R::*field) {
  return {name, [field](R& r, S& s, int c) { r.*field = s.u64(c); }};
}
Column u8(const char* name, std::uint8_t R::*field) {
  return {name, [field](R& r, S& s, int c) { r.*field = static_cast<std::uint8_t>(s.i64(c)); }};
}

}  // namespace

Result<ImportReport> importNsys(const std::string& path, Store& store, const ImportProgress& progress) {
  auto db = sql::Db::open(path, SQLITE_OPEN_READONLY, kIo);
  if (!db) return db.takeError();
  ImportReport report;
  report.format = TraceFormat::NsysSqlite;
  NsysReader nsys(path, *db, store, report, progress);
  if (auto r = nsys.prepare(); !r) return r.takeError();
  static const char* const kTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                        "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"};
  bool any = false;
  for (const char* t : kTables) any = any || nsys.has(t);
  nsys.countRows(std::vector<std::string>(std::begin(kTables), std::end(kTables)));
  if (!any) {
    return Error{kMalformed, path + ": an SQLite file without Nsight Systems tables (CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS)", true};
  }
  NsysReader* n = &nsys;
  auto end = Column{"end", [n](R& r, S& s, int c) { r.end = n->time(s.i64(c)); }};
  auto gpid = Column{"globalPid", [](R& r, S& s, int c) { r.pid = NsysReader::pidOf(s.i64(c)); }};
  auto gtid = Column{"globalTid", [](R& r, S& s, int c) {
                       r.pid = NsysReader::pidOf(s.i64(c));
                       r.tid = NsysReader::tidOf(s.i64(c));
                     }};
  std::vector<Column> gpuCommon = {end, gpid, u32("deviceId", &R::device), u32("contextId", &R::context),
                                   u32("streamId", &R::stream), u32("correlationId", &R::correlation)};
  auto with = [&](std::vector<Column> extra) {
    std::vector<Column> all = gpuCommon;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  auto nameFrom = [n](const char* column) {
    return Column{column, [n](R& r, S& s, int c) {
                    if (!r.name) r.name = n->name(s.i64(c));
                  }};
  };
  auto grid = [](const char* name, int i, bool block) {
    return Column{name, [i, block](R& r, S& s, int c) { (block ? r.block : r.grid)[i] = static_cast<std::int32_t>(s.i64(c)); }};
  };
  Result<void> result = store.atomically([&]() -> Result<void> {
    if (auto r = nsys.devices(); !r) return r;
    // Kernel names: the mangled one when present (demangled on interning), else nsys's.
    if (auto r = nsys.read("CUPTI_ACTIVITY_KIND_KERNEL", RecordKind::Kernel,
                           with({nameFrom("mangledName"), nameFrom("demangledName"), nameFrom("shortName"),
                                 grid("gridX", 0, false), grid("gridY", 1, false), grid("gridZ", 2, false),
                                 grid("blockX", 0, true), grid("blockY", 1, true), grid("blockZ", 2, true),
                                 u32("registersPerThread", &R::registersPerThread),
                                 u32("staticSharedMemory", &R::staticSharedMemory),
                                 u32("dynamicSharedMemory", &R::dynamicSharedMemory),
                                 u64("graphNodeId", &R::graphNodeId), u64("graphId", &R::graphId)}));
        !r) {
      return r;
    }
    if (auto r = nsys.read("CUPTI_ACTIVITY_KIND_MEMCPY", RecordKind::Memcpy,
                           with({u64("bytes", &R::bytes), u8("copyKind", &R::copyKind), u8("srcKind", &R::srcKind),
                                 u8("dstKind", &R::dstKind), u64("graphNodeId", &R::graphNodeId)}));
        !r) {
      return r;
    }
    if (auto r = nsys.read("CUPTI_ACTIVITY_KIND_MEMSET", RecordKind::Memset,
                           with({u64("bytes", &R::bytes), u8("memKind", &R::dstKind), u64("graphNodeId", &R::graphNodeId)}));
        !r) {
      return r;
    }
    if (auto r = nsys.read("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", RecordKind::Synchronization,
                           with({u8("syncType", &R::copyKind)}));
        !r) {
      return r;
    }
    // Runtime and driver calls share nsys's table; the name says which (cuda* vs cu*).
    std::vector<Column> api = {end, gtid, u32("correlationId", &R::correlation),
                               Column{"returnValue", [](R& r, S& s, int c) { r.result = static_cast<std::int32_t>(s.i64(c)); }},
                               Column{"nameId", [n](R& r, S& s, int c) {
                                        auto name = n->lookup(s.i64(c));
                                        r.name = name.id;
                                        if (name.driverApi) r.kind = RecordKind::DriverApi;
                                      }}};
    if (auto r = nsys.read("CUPTI_ACTIVITY_KIND_RUNTIME", RecordKind::RuntimeApi, api); !r) return r;
    // NVTX: marks (34), push/pop (59) and start/end (60) ranges; the text inline or by id.
    std::vector<Column> nvtx = {end, gtid,
                                Column{"text", [&store](R& r, S& s, int c) { r.name = store.internName(s.text(c)); }},
                                Column{"textId", [n](R& r, S& s, int c) {
                                         if (!r.name) r.name = n->name(s.i64(c));
                                       }},
                                Column{"eventType", [](R&, S&, int) {}}};
    auto keep = [](S& s, const std::vector<int>& idx) {
      int type = idx[4], text = idx[2], textId = idx[3];
      if (type >= 0 && !s.isNull(type)) {
        auto t = s.i64(type);
        if (t != 34 && t != 59 && t != 60) return false;
      }
      return (text >= 0 && !s.isNull(text)) || (textId >= 0 && !s.isNull(textId));
    };
    if (auto r = nsys.read("NVTX_EVENTS", RecordKind::Marker, nvtx, keep); !r) return r;
    return {};
  });
  if (!result) return result.takeError();
  return report;
}

}  // namespace strata::cuda
