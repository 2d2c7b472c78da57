// The store file: schema, opening and closing, names, sites, devices, transactions.
#include <sys/stat.h>


#include <cstdlib>
#include <cstring>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

// Every documented table (README, "Tables"); chunks and lod hold encoded blobs that the
// virtual tables of `sql()` decode.
constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL, demangled TEXT);
CREATE UNIQUE INDEX strings_by_text ON strings(text);
CREATE TABLE tracks(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, pid INTEGER NOT NULL,
  device INTEGER NOT NULL, stream INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT NOT NULL,
  records INTEGER NOT NULL, kernels INTEGER NOT NULL, untimed INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL, kinds INTEGER NOT NULL, long_classes INTEGER NOT NULL);
CREATE TABLE chunks(id INTEGER PRIMARY KEY, track INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL, count INTEGER NOT NULL, kinds INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX chunks_by_time ON chunks(track, start_ns);
CREATE TABLE lod(track INTEGER NOT NULL, level INTEGER NOT NULL, page INTEGER NOT NULL,
  data BLOB NOT NULL, PRIMARY KEY(track, level, page)) WITHOUT ROWID;
CREATE TABLE long_records(id INTEGER PRIMARY KEY, track INTEGER NOT NULL, dclass INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, kind INTEGER NOT NULL, name INTEGER NOT NULL);
CREATE INDEX long_records_by_time ON long_records(track, dclass, start_ns);
CREATE TABLE kernel_stats(name INTEGER PRIMARY KEY, count INTEGER NOT NULL, timed INTEGER NOT NULL,
  total_ns INTEGER NOT NULL, min_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL);
CREATE TABLE api_stats(name INTEGER PRIMARY KEY, kind INTEGER NOT NULL, count INTEGER NOT NULL,
  timed INTEGER NOT NULL, total_ns INTEGER NOT NULL, min_ns INTEGER NOT NULL,
  max_ns INTEGER NOT NULL, errors INTEGER NOT NULL);
CREATE TABLE copy_stats(kind INTEGER NOT NULL, copy_kind INTEGER NOT NULL, count INTEGER NOT NULL,
  bytes INTEGER NOT NULL, total_ns INTEGER NOT NULL, PRIMARY KEY(kind, copy_kind)) WITHOUT ROWID;
CREATE TABLE sync_stats(sync_kind INTEGER PRIMARY KEY, count INTEGER NOT NULL, total_ns INTEGER NOT NULL);
CREATE TABLE devices(device INTEGER PRIMARY KEY, name TEXT, compute_major INTEGER,
  compute_minor INTEGER, sm_count INTEGER, max_threads_per_block INTEGER,
  max_threads_per_sm INTEGER, max_blocks_per_sm INTEGER, regs_per_block INTEGER,
  regs_per_sm INTEGER, warp_size INTEGER, shared_mem_per_block INTEGER,
  shared_mem_per_sm INTEGER, shared_mem_per_block_optin INTEGER,
  reserved_shared_mem_per_block INTEGER, total_global_mem INTEGER, source TEXT);
CREATE TABLE launch_sites(pid INTEGER NOT NULL, id INTEGER NOT NULL, python_frames INTEGER NOT NULL,
  native_frames INTEGER NOT NULL, attribution TEXT, caller_tid INTEGER, waited_in TEXT,
  PRIMARY KEY(pid, id)) WITHOUT ROWID;
CREATE TABLE site_frames(pid INTEGER NOT NULL, site INTEGER NOT NULL, kind TEXT NOT NULL,
  depth INTEGER NOT NULL, function TEXT, file TEXT, line INTEGER, address INTEGER, module TEXT,
  eval_call INTEGER, PRIMARY KEY(pid, site, kind, depth)) WITHOUT ROWID;
CREATE TABLE dropped(pid INTEGER PRIMARY KEY, count INTEGER NOT NULL);
)sql";
// A launch site's native frames as the collector resolved them: the module, the address in
// the module's own terms (what its DWARF and symbol table use) and the nearest symbol.
constexpr const char* kNativeFramesTable =
    "CREATE TABLE IF NOT EXISTS native_frames(pid INTEGER NOT NULL, site INTEGER NOT NULL, depth INTEGER NOT NULL, "
    "module TEXT, module_address INTEGER, symbol TEXT, PRIMARY KEY(pid, site, depth)) WITHOUT ROWID;";

// The nodes of CUDA graphs and the sites that made them (stream capture, or adding the node): a
// replayed kernel carries its node's id.
constexpr const char* kGraphNodesTable =
    "CREATE TABLE IF NOT EXISTS graph_nodes(pid INTEGER NOT NULL, node INTEGER NOT NULL, site INTEGER NOT NULL, "
    "origin TEXT, PRIMARY KEY(pid, node)) WITHOUT ROWID;";

// Hardware metrics measured at profile requests (metrics.cpp), or why a request measured none.
constexpr const char* kKernelMetricsTable =
    "CREATE TABLE IF NOT EXISTS kernel_metrics(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, "
    "correlation INTEGER NOT NULL, kernel TEXT, device INTEGER, request INTEGER NOT NULL, time_ns INTEGER, "
    "passes INTEGER, sm_throughput_pct REAL, dram_throughput_pct REAL, achieved_occupancy_pct REAL, "
    "duration_ns REAL, error TEXT, result INTEGER);"
    "CREATE INDEX IF NOT EXISTS kernel_metrics_by_launch ON kernel_metrics(pid, correlation);";

bool fileExists(const std::string& path) {
  struct stat sb;
  return ::stat(path.c_str(), &sb) == 0;
}

bool hasColumn(sql::Db& db, const char* table, std::string_view column) {
  auto st = sql::Stmt::prepare(db, std::string("PRAGMA table_info(") + table + ")", kIo, false);
  if (!st) return false;
  while (st->step() == SQLITE_ROW)
    if (st->text(1) == column) return true;
  return false;
}

// Columns later Strata versions added to tables of the first format, for stores written before.
Result<void> addSiteColumns(sql::Db& db) {
  if (!hasColumn(db, "launch_sites", "attribution")) {
    if (auto r = db.exec("ALTER TABLE launch_sites ADD COLUMN attribution TEXT; "
                         "ALTER TABLE launch_sites ADD COLUMN caller_tid INTEGER; "
                         "ALTER TABLE launch_sites ADD COLUMN waited_in TEXT;",
                         kIo);
        !r)
      return r;
  }
  if (!hasColumn(db, "site_frames", "eval_call")) {
    if (auto r = db.exec("ALTER TABLE site_frames ADD COLUMN eval_call INTEGER;", kIo); !r) return r;
  }
  return {};
}

}  // namespace

bool onCpuTrack(const GpuRecord& r) {
  switch (r.kind) {
    case RecordKind::RuntimeApi:
    case RecordKind::DriverApi:
    case RecordKind::CpuOp:
      return true;
    case RecordKind::Marker:
    case RecordKind::Overhead:
      return r.tid != 0;
    default:
      return false;
  }
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Store::~Store() { (void)close(); }

const std::string& Store::path() const { return impl_->path; }
bool Store::readOnly() const { return impl_->readOnly; }

static Result<void> configure(sql::Db& db, bool readOnly) {
  // WAL: a reader (sql(), another process) never blocks the writer; synchronous=NORMAL syncs
  // only at checkpoints, which keeps the file consistent across a crash (the last commits may be
  // lost, nothing is corrupted). The page cache is bounded (16 MiB) whatever the trace size.
  if (!readOnly) {
    if (auto r = db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", kIo); !r) return r;
  }
  return db.exec("PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;", kIo);
}

Result<std::unique_ptr<Store>> Store::create(const std::string& path, StoreOptions options) {
  if (fileExists(path)) return Error{kIo, path + ": a file is already there (a store is never written over)", true};
  auto db = sql::Db::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, kIo);
  if (!db) return db.takeError();
  // Chunks are ~10-30 KiB: larger pages mean shorter overflow chains.
  if (auto r = db->exec("PRAGMA page_size=32768;", kIo); !r) return r.takeError();
  if (auto r = configure(*db, false); !r) return r.takeError();
  if (auto r = db->exec("BEGIN", kIo); !r) return r.takeError();
  if (auto r = db->exec(kSchema, kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
  if (auto r = db->exec(kNativeFramesTable, kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
  if (auto r = db->exec(kKernelMetricsTable, kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
  if (auto r = db->exec(kGraphNodesTable, kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
  std::string meta = std::string("INSERT INTO meta VALUES('format','") + kStoreFormatName +
                     "'),('version','" + std::to_string(kStoreFormatVersion) + "'); COMMIT";
  if (auto r = db->exec(meta.c_str(), kIo); !r) return r.takeError();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->maxBuffered = options.maxBufferedRecords;
  impl->maxOpenEntries = options.maxOpenLodEntries;
  impl->db = std::move(*db);
  if (auto r = impl->prepareStatements(); !r) return r.takeError();
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Result<std::unique_ptr<Store>> Store::open(const std::string& path, StoreOptions options) {
  if (!fileExists(path)) return Error{kIo, path + ": no such file", true};
  int flags = options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  auto db = sql::Db::open(path, flags, kIo);
  if (!db) return db.takeError();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->readOnly = options.readOnly;
  impl->maxBuffered = options.maxBufferedRecords;
  impl->maxOpenEntries = options.maxOpenLodEntries;
  {
    auto st = sql::Stmt::prepare(*db, "SELECT value FROM meta WHERE key='format' OR key='version' ORDER BY key", kNotAStore, false);
    if (!st) return Error{kNotAStore, path + ": not a Strata GPU store (" + st.error().message + ")", true};
    std::string format, version;
    if (st->step() == SQLITE_ROW) format = std::string(st->text(0));
    if (st->step() == SQLITE_ROW) version = std::string(st->text(0));
    if (format != kStoreFormatName) return Error{kNotAStore, path + ": not a Strata GPU store", true};
    if (std::atoi(version.c_str()) > kStoreFormatVersion) {
      return Error{kNotAStore, path + ": a store of format version " + version +
                                   ", newer than this Strata reads (" + std::to_string(kStoreFormatVersion) + ")", true};
    }
  }
  if (auto r = configure(*db, options.readOnly); !r) return Error{kIo, path + ": " + r.error().message, true};
  // Stores written before native frames were kept resolved get the table (they hold none).
  if (!options.readOnly) {
    if (auto r = db->exec(kNativeFramesTable, kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
    if (auto r = db->exec(kKernelMetricsTable, kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
    if (auto r = db->exec(kGraphNodesTable, kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
    if (auto r = addSiteColumns(*db); !r) return Error{kIo, path + ": " + r.error().message, true};
  }
  impl->siteColumns = hasColumn(*db, "launch_sites", "attribution") && hasColumn(*db, "site_frames", "eval_call");
  impl->graphNodes = hasColumn(*db, "graph_nodes", "node");
  impl->db = std::move(*db);
  if (auto r = impl->prepareStatements(); !r) return r.takeError();
  if (auto r = impl->loadState(); !r) return r.takeError();
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Result<void> Store::close() {
  if (!impl_ || !impl_->db) return {};
  Result<void> result;
  if (!impl_->readOnly) result = flush();
  impl_->reader.reset();
  impl_->st = Impl::Statements{};
  if (!impl_->readOnly) {
    // Back to one self-contained file (no -wal/-shm beside it): the file the user keeps.
    (void)impl_->db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", kIo);
  }
  impl_->db.reset();
  return result;
}

Result<void> Store::Impl::prepareStatements() {
  struct P {
    sql::Stmt* st;
    const char* sql;
  };
  const P all[] = {
      {&st.insChunk, "INSERT INTO chunks(id,track,start_ns,end_ns,count,kinds,data) VALUES(?,?,?,?,?,?,?)"},
      {&st.insLod, "INSERT OR REPLACE INTO lod(track,level,page,data) VALUES(?,?,?,?)"},
      {&st.selLod, "SELECT data FROM lod WHERE track=? AND level=? AND page=?"},
      {&st.selLodRange, "SELECT page,data FROM lod WHERE track=? AND level=? AND page BETWEEN ? AND ? ORDER BY page"},
      {&st.insLong, "INSERT INTO long_records(id,track,dclass,start_ns,end_ns,kind,name) VALUES(?,?,?,?,?,?,?)"},
      {&st.insString, "INSERT INTO strings(id,text,demangled) VALUES(?,?,?)"},
      {&st.selStringByText, "SELECT id FROM strings WHERE text=?"},
      {&st.selStringById, "SELECT text,demangled FROM strings WHERE id=?"},
      {&st.upTrack, "INSERT OR REPLACE INTO tracks(id,kind,pid,device,stream,tid,name,records,kernels,untimed,start_ns,end_ns,kinds,long_classes) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st.upKernelStat, "INSERT OR REPLACE INTO kernel_stats(name,count,timed,total_ns,min_ns,max_ns) VALUES(?,?,?,?,?,?)"},
      {&st.upApiStat, "INSERT OR REPLACE INTO api_stats(name,kind,count,timed,total_ns,min_ns,max_ns,errors) VALUES(?,?,?,?,?,?,?,?)"},
      {&st.upCopyStat, "INSERT OR REPLACE INTO copy_stats(kind,copy_kind,count,bytes,total_ns) VALUES(?,?,?,?,?)"},
      {&st.upSyncStat, "INSERT OR REPLACE INTO sync_stats(sync_kind,count,total_ns) VALUES(?,?,?)"},
      {&st.upDevice, "INSERT OR REPLACE INTO devices VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      // A read-only store from before these columns never writes: its statements are the older ones.
      {&st.insSite, siteColumns ? "INSERT OR REPLACE INTO launch_sites(pid,id,python_frames,native_frames,attribution,"
                                  "caller_tid,waited_in) VALUES(?,?,?,?,?,?,?)"
                                : "INSERT OR REPLACE INTO launch_sites(pid,id,python_frames,native_frames) VALUES(?,?,?,?)"},
      {&st.delFrames, "DELETE FROM site_frames WHERE pid=? AND site=?"},
      {&st.insFrame, siteColumns ? "INSERT INTO site_frames(pid,site,kind,depth,function,file,line,address,module,eval_call) "
                                   "VALUES(?,?,?,?,?,?,?,?,?,?)"
                                 : "INSERT INTO site_frames(pid,site,kind,depth,function,file,line,address,module) "
                                   "VALUES(?,?,?,?,?,?,?,?,?)"},
      {&st.addDropped, "INSERT INTO dropped(pid,count) VALUES(?,?) ON CONFLICT(pid) DO UPDATE SET count=count+excluded.count"},
      {&st.setMeta, "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)"},
      {&st.selChunk, "SELECT track,data FROM chunks WHERE id=?"},
      {&st.selChunksInRange, "SELECT id,start_ns,end_ns,kinds,data FROM chunks WHERE track=? AND start_ns>=? AND start_ns<? ORDER BY start_ns"},
      // A thread's chunks back from a time, latest first (gpuKernel's joins; bound and limit each use).
      {&st.selChunksBefore, "SELECT id,data FROM chunks WHERE track=? AND start_ns<=? ORDER BY start_ns DESC LIMIT ?"},
      {&st.selLongRange, "SELECT id,start_ns,end_ns,kind,name FROM long_records WHERE track=? AND dclass=? AND start_ns>=? AND start_ns<? AND end_ns>?"},
      {&st.selMaxPage, "SELECT level,max(page) FROM lod WHERE track=? GROUP BY level"},
  };
  for (const P& p : all) {
    auto s = sql::Stmt::prepare(db, p.sql, kNotAStore);
    if (!s) return Error{kNotAStore, path + ": not a Strata GPU store of this format (" + s.error().message + ")", true};
    *p.st = std::move(*s);
  }
  return {};
}

Result<void> Store::Impl::loadState() {
  auto fail = [&](const char* what) { return Error{kIo, path + ": reading " + what + ": " + db.message(), true}; };
  tracks.clear();
  trackByKey.clear();
  lastTrack = 0;
  buffered = 0;
  lodEntriesOpen = 0;
  kernelStats.clear();
  apiStats.clear();
  copyStats.clear();
  syncStats.clear();
  records = kernels = copies = untimed = dropped = 0;
  devices.clear();
  {
    auto s = sql::Stmt::prepare(db, "SELECT id,kind,pid,device,stream,tid,name,records,kernels,untimed,start_ns,end_ns,kinds,long_classes FROM tracks ORDER BY id", kIo, false);
    if (!s) return fail("tracks");
    int rc;
    while ((rc = s->step()) == SQLITE_ROW) {
      TrackState t;
      t.info.id = static_cast<std::uint32_t>(s->i64(0));
      t.info.kind = s->text(1) == "cpu" ? TrackKind::Cpu : TrackKind::Gpu;
      t.info.pid = static_cast<std::uint32_t>(s->i64(2));
      t.info.device = static_cast<std::uint32_t>(s->i64(3));
      t.info.stream = static_cast<std::uint32_t>(s->i64(4));
      t.info.tid = static_cast<std::uint32_t>(s->i64(5));
      t.info.name = std::string(s->text(6));
      t.records = s->u64(7);
      t.kernels = s->u64(8);
      t.untimed = s->u64(9);
      t.start = s->u64(10);
      t.end = s->u64(11);
      t.kinds = static_cast<std::uint32_t>(s->i64(12));
      t.longClasses = s->u64(13);
      if (t.info.id != tracks.size() + 1) return Error{kNotAStore, path + ": track ids are not dense", true};
      records += t.records;
      untimed += t.untimed;
      TrackKey key = t.info.kind == TrackKind::Cpu ? TrackKey{2, t.info.pid, t.info.tid, 0}
                                                   : TrackKey{1, t.info.pid, t.info.device, t.info.stream};
      trackByKey[key] = t.info.id;
      tracks.push_back(std::move(t));
    }
    if (rc != SQLITE_DONE) return fail("tracks");
  }
  auto loadAgg = [&](const char* q, std::vector<Agg>& into, bool api) -> Result<void> {
    auto s = sql::Stmt::prepare(db, q, kIo, false);
    if (!s) return fail("statistics");
    while (s->step() == SQLITE_ROW) {
      auto id = static_cast<std::uint32_t>(s->i64(0));
      if (id >= into.size()) into.resize(id + 1);
      Agg& a = into[id];
      int c = 1;
      if (api) a.kind = static_cast<std::uint8_t>(s->i64(c++));
      a.count = s->u64(c++);
      a.timed = s->u64(c++);
      a.total = s->u64(c++);
      a.min = s->u64(c++);
      a.max = s->u64(c++);
      if (api) a.errors = s->u64(c++);
    }
    return {};
  };
  if (auto r = loadAgg("SELECT name,count,timed,total_ns,min_ns,max_ns FROM kernel_stats", kernelStats, false); !r) return r;
  if (auto r = loadAgg("SELECT name,kind,count,timed,total_ns,min_ns,max_ns,errors FROM api_stats", apiStats, true); !r) return r;
  for (auto& a : kernelStats) kernels += a.count;
  {
    auto s = sql::Stmt::prepare(db, "SELECT kind,copy_kind,count,bytes,total_ns FROM copy_stats", kIo, false);
    if (!s) return fail("copy_stats");
    while (s->step() == SQLITE_ROW) {
      CopyAgg& c = copyStats[{static_cast<std::uint8_t>(s->i64(0)), static_cast<std::uint8_t>(s->i64(1))}];
      c.count = s->u64(2);
      c.bytes = s->u64(3);
      c.total = s->u64(4);
      copies += c.count;
    }
  }
  {
    auto s = sql::Stmt::prepare(db, "SELECT sync_kind,count,total_ns FROM sync_stats", kIo, false);
    if (!s) return fail("sync_stats");
    while (s->step() == SQLITE_ROW) {
      CopyAgg& c = syncStats[static_cast<std::uint8_t>(s->i64(0))];
      c.count = s->u64(1);
      c.total = s->u64(2);
    }
  }
  {
    auto s = sql::Stmt::prepare(db, "SELECT (SELECT coalesce(max(id),0) FROM chunks), (SELECT coalesce(max(id),0) FROM strings), (SELECT coalesce(sum(count),0) FROM dropped)", kIo, false);
    if (!s || s->step() != SQLITE_ROW) return fail("chunks");
    nextChunkId = s->i64(0) + 1;
    nextNameId = static_cast<std::uint32_t>(s->i64(1) + 1);
    dropped = s->u64(2);
  }
  {
    auto s = sql::Stmt::prepare(db, "SELECT * FROM devices", kIo, false);
    if (!s) return fail("devices");
    while (s->step() == SQLITE_ROW) {
      DeviceProperties p;
      p.device = static_cast<std::uint32_t>(s->i64(0));
      p.name = std::string(s->text(1));
      p.computeMajor = static_cast<int>(s->i64(2));
      p.computeMinor = static_cast<int>(s->i64(3));
      p.smCount = static_cast<int>(s->i64(4));
      p.maxThreadsPerBlock = static_cast<int>(s->i64(5));
      p.maxThreadsPerMultiprocessor = static_cast<int>(s->i64(6));
      p.maxBlocksPerMultiprocessor = static_cast<int>(s->i64(7));
      p.regsPerBlock = static_cast<int>(s->i64(8));
      p.regsPerMultiprocessor = static_cast<int>(s->i64(9));
      p.warpSize = static_cast<int>(s->i64(10));
      p.sharedMemPerBlock = s->u64(11);
      p.sharedMemPerMultiprocessor = s->u64(12);
      p.sharedMemPerBlockOptin = s->u64(13);
      p.reservedSharedMemPerBlock = s->u64(14);
      p.totalGlobalMem = s->u64(15);
      p.source = std::string(s->text(16));
      devices[p.device] = p;
    }
  }
  // Names above the committed ones were rolled back.
  for (auto it = nameIds.begin(); it != nameIds.end();) {
    it = it->second >= nextNameId ? nameIds.erase(it) : std::next(it);
  }
  for (auto it = nameTexts.begin(); it != nameTexts.end();) {
    it = it->first >= nextNameId ? nameTexts.erase(it) : std::next(it);
  }
  return {};
}

Result<void> Store::Impl::beginWrite() {
  if (readOnly) return Error{kReadOnly, path + ": the store was opened read-only", true};
  if (inTxn) return {};
  if (auto r = db.exec("BEGIN", kIo); !r) return Error{kIo, path + ": " + r.error().message, true};
  inTxn = true;
  return {};
}

Result<void> Store::Impl::commit() {
  if (!inTxn) return {};
  if (auto r = db.exec("COMMIT", kIo); !r) return Error{kIo, path + ": commit: " + r.error().message, true};
  inTxn = false;
  chunksSinceCommit = 0;
  return {};
}

Result<void> Store::Impl::rollback() {
  if (inTxn) (void)db.exec("ROLLBACK", kIo);
  inTxn = false;
  chunksSinceCommit = 0;
  return loadState();
}

std::uint32_t Store::internName(std::string_view text) {
  Impl& m = *impl_;
  if (auto it = m.nameIds.find(text); it != m.nameIds.end()) return it->second;
  m.st.selStringByText.bindText(1, text);
  std::uint32_t id = 0;
  if (m.st.selStringByText.step() == SQLITE_ROW) id = static_cast<std::uint32_t>(m.st.selStringByText.i64(0));
  m.st.selStringByText.reset();
  if (id == 0) {
    if (!m.beginWrite()) return 0;
    id = m.nextNameId;
    std::string d = demangle(text);
    m.st.insString.bind(1, id).bindText(2, text);
    if (d != text) m.st.insString.bindText(3, d);
    if (!sql::run(m.db, m.st.insString, kIo, "strings")) return 0;
    ++m.nextNameId;
  }
  if (m.nameIds.size() > (1u << 20)) m.nameIds.clear();  // bounded: misses go to the index
  m.nameIds.emplace(std::string(text), id);
  return id;
}

std::string Store::Impl::nameText(std::uint32_t id) {
  if (id == 0) return {};
  if (auto it = nameTexts.find(id); it != nameTexts.end()) return it->second;
  std::string text;
  st.selStringById.bind(1, id);
  if (st.selStringById.step() == SQLITE_ROW) {
    text = std::string(st.selStringById.isNull(1) ? st.selStringById.text(0) : st.selStringById.text(1));
  }
  st.selStringById.reset();
  if (nameTexts.size() > (1u << 16)) nameTexts.clear();
  nameTexts.emplace(id, text);
  return text;
}

Result<std::string> Store::nameOf(std::uint32_t id) {
  std::string s = impl_->nameText(id);
  if (s.empty() && id != 0) return Error{kNotFound, "no name with id " + std::to_string(id), true};
  return s;
}

Result<void> Store::setDeviceProperties(const DeviceProperties& p) {
  Impl& m = *impl_;
  if (auto r = m.beginWrite(); !r) return r;
  auto& s = m.st.upDevice;
  s.bind(1, p.device).bindText(2, p.name).bind(3, p.computeMajor).bind(4, p.computeMinor)
      .bind(5, p.smCount).bind(6, p.maxThreadsPerBlock).bind(7, p.maxThreadsPerMultiprocessor)
      .bind(8, p.maxBlocksPerMultiprocessor).bind(9, p.regsPerBlock).bind(10, p.regsPerMultiprocessor)
      .bind(11, p.warpSize).bindU(12, p.sharedMemPerBlock).bindU(13, p.sharedMemPerMultiprocessor)
      .bindU(14, p.sharedMemPerBlockOptin).bindU(15, p.reservedSharedMemPerBlock)
      .bindU(16, p.totalGlobalMem).bindText(17, p.source);
  if (auto r = sql::run(m.db, s, kIo, "devices"); !r) return r;
  m.devices[p.device] = p;
  return {};
}

std::optional<DeviceProperties> Store::deviceProperties(std::uint32_t device) {
  auto it = impl_->devices.find(device);
  if (it == impl_->devices.end()) return std::nullopt;
  return it->second;
}

Result<void> Store::addDropped(std::uint32_t pid, std::uint64_t count) {
  Impl& m = *impl_;
  if (auto r = m.beginWrite(); !r) return r;
  m.st.addDropped.bind(1, pid).bindU(2, count);
  if (auto r = sql::run(m.db, m.st.addDropped, kIo, "dropped"); !r) return r;
  m.dropped += count;
  return {};
}

Result<void> Store::setMeta(std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  if (auto r = m.beginWrite(); !r) return r;
  m.st.setMeta.bindText(1, key).bindText(2, value);
  return sql::run(m.db, m.st.setMeta, kIo, "meta");
}

std::optional<std::string> Store::meta(std::string_view key) {
  auto s = sql::Stmt::prepare(impl_->db, "SELECT value FROM meta WHERE key=?", kIo, false);
  if (!s) return std::nullopt;
  s->bindText(1, key);
  if (s->step() != SQLITE_ROW) return std::nullopt;
  return std::string(s->text(0));
}

ActivityCounts Store::counts() const {
  const Impl& m = *impl_;
  ActivityCounts c;
  c.records = m.records;
  c.kernels = m.kernels;
  c.copies = m.copies;
  c.dropped = m.dropped;
  for (const TrackState& t : m.tracks) {
    if (t.start == 0) continue;
    if (c.timeSpan.startNs == 0 || t.start < c.timeSpan.startNs) c.timeSpan.startNs = t.start;
    if (t.end > c.timeSpan.endNs) c.timeSpan.endNs = t.end;
  }
  return c;
}

Result<void> Store::flush() {
  Impl& m = *impl_;
  if (m.readOnly) return {};
  if (auto r = m.writeBuffered(); !r) return r;
  if (m.atomicDepth > 0) return {};
  return m.commit();
}

Result<void> Store::atomically(const std::function<Result<void>()>& body) {
  Impl& m = *impl_;
  if (m.atomicDepth > 0) return body();
  if (auto r = flush(); !r) return r;
  if (auto r = m.beginWrite(); !r) return r;
  ++m.atomicDepth;
  Result<void> result = body();
  if (result) result = m.writeBuffered();
  --m.atomicDepth;
  if (!result) {
    Error e = result.takeError();
    if (auto r = m.rollback(); !r) e.message += " (and reloading the store failed: " + r.error().message + ")";
    return e;
  }
  return m.commit();
}

}  // namespace strata::cuda
