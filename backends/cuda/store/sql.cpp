// !sql: one read-only statement on a read-only connection with an authorizer that refuses
// anything but reading, over the store's tables and virtual tables that decode its chunks
// (records, kernels, copies, syncs, api, markers, cpu_ops); rows and time bounded.
#include <chrono>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

constexpr std::size_t kMaxCellText = 4096;

enum Col {
  cId, cKind, cName, cMangled, cNameId, cPid, cTid, cDevice, cContext, cStream, cCorrelation, cExternalId, cSite,
  cResult, cStart, cEnd, cDuration, cBytes, cCopyKind, cSrcKind, cDstKind, cSyncKind, cGraphId, cGraphNodeId,
  cGridX, cGridY, cGridZ, cBlockX, cBlockY, cBlockZ, cRegisters, cStaticShared, cDynamicShared, cTrack, cCount
};
constexpr const char* kColumns[cCount] = {
    "id INTEGER", "kind TEXT", "name TEXT", "mangled TEXT", "name_id INTEGER", "pid INTEGER", "tid INTEGER",
    "device INTEGER", "context INTEGER", "stream INTEGER", "correlation INTEGER", "external_id INTEGER",
    "site INTEGER", "result INTEGER", "start_ns INTEGER", "end_ns INTEGER", "duration_ns INTEGER", "bytes INTEGER",
    "copy_kind TEXT", "src_kind INTEGER", "dst_kind INTEGER", "sync_kind TEXT", "graph_id INTEGER",
    "graph_node_id INTEGER", "grid_x INTEGER", "grid_y INTEGER", "grid_z INTEGER", "block_x INTEGER",
    "block_y INTEGER", "block_z INTEGER", "registers INTEGER", "static_shared INTEGER", "dynamic_shared INTEGER",
    "track INTEGER"};

struct TableDef {
  const char* name;
  std::uint32_t kinds;
  std::vector<int> visible;  // empty: every column
};
std::uint32_t kinds(std::initializer_list<RecordKind> ks) {
  std::uint32_t m = 0;
  for (auto k : ks) m |= kindBit(k);
  return m;
}
const std::vector<TableDef>& tableDefs() {
  static const std::vector<TableDef> defs = {
      {"records", 0xffffffffu, {}},
      {"kernels", kinds({RecordKind::Kernel}),
       {cId, cName, cMangled, cNameId, cPid, cDevice, cContext, cStream, cCorrelation, cExternalId, cSite, cStart,
        cEnd, cDuration, cGraphId, cGraphNodeId, cGridX, cGridY, cGridZ, cBlockX, cBlockY, cBlockZ, cRegisters,
        cStaticShared, cDynamicShared, cTrack}},
      {"copies", kinds({RecordKind::Memcpy, RecordKind::Memset}),
       {cId, cKind, cName, cNameId, cPid, cDevice, cContext, cStream, cCorrelation, cExternalId, cStart, cEnd,
        cDuration, cBytes, cCopyKind, cSrcKind, cDstKind, cGraphNodeId, cTrack}},
      {"syncs", kinds({RecordKind::Synchronization}),
       {cId, cPid, cDevice, cContext, cStream, cCorrelation, cStart, cEnd, cDuration, cSyncKind, cTrack}},
      {"api", kinds({RecordKind::RuntimeApi, RecordKind::DriverApi}),
       {cId, cKind, cName, cNameId, cPid, cTid, cCorrelation, cExternalId, cResult, cStart, cEnd, cDuration, cTrack}},
      {"markers", kinds({RecordKind::Marker}),
       {cId, cName, cNameId, cPid, cTid, cDevice, cStream, cStart, cEnd, cDuration, cTrack}},
      {"cpu_ops", kinds({RecordKind::CpuOp}),
       {cId, cName, cNameId, cPid, cTid, cExternalId, cStart, cEnd, cDuration, cTrack}},
  };
  return defs;
}

struct VTab {
  sqlite3_vtab base{};
  sqlite3* db = nullptr;
  const TableDef* def = nullptr;
};

struct Cursor {
  sqlite3_vtab_cursor base{};
  VTab* tab = nullptr;
  sqlite3_stmt* chunks = nullptr;  // yields (id, track, data)
  std::vector<GpuRecord> recs;
  std::uint64_t chunkId = 0;
  std::uint32_t track = 0;
  std::size_t i = 0;
  bool eof = true;
  std::int64_t onlyIndex = -1;  // id lookups: the one record of the chunk
  std::unordered_map<std::uint32_t, std::pair<std::string, std::string>> names;  // id -> (demangled, text)
  sqlite3_stmt* nameStmt = nullptr;
};

int vtConnect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** err) {
  (void)aux;
  const TableDef* def = nullptr;
  std::string which = argc > 3 ? argv[3] : "records";
  for (const TableDef& d : tableDefs()) {
    if (which == d.name) def = &d;
  }
  if (!def) {
    *err = sqlite3_mprintf("strata_records: unknown table %s", which.c_str());
    return SQLITE_ERROR;
  }
  std::string ddl = "CREATE TABLE x(";
  for (int c = 0; c < cCount; ++c) {
    bool visible = def->visible.empty();
    for (int v : def->visible) visible = visible || v == c;
    ddl += std::string(c ? "," : "") + kColumns[c] + (visible ? "" : " HIDDEN");
  }
  ddl += ")";
  if (int rc = sqlite3_declare_vtab(db, ddl.c_str()); rc != SQLITE_OK) return rc;
  auto* t = new VTab;
  t->db = db;
  t->def = def;
  *out = &t->base;
  return SQLITE_OK;
}

int vtDisconnect(sqlite3_vtab* v) {
  delete reinterpret_cast<VTab*>(v);
  return SQLITE_OK;
}

// idxNum bits: 1 id =, 2 start lower bound, 4 start upper bound.
int vtBestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  int idIdx = -1, lowIdx = -1, highIdx = -1;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (!c.usable) continue;
    if (c.iColumn == cId && c.op == SQLITE_INDEX_CONSTRAINT_EQ) idIdx = i;
    if (c.iColumn == -1 && c.op == SQLITE_INDEX_CONSTRAINT_EQ) idIdx = i;  // rowid
    if (c.iColumn == cStart) {
      if (c.op == SQLITE_INDEX_CONSTRAINT_GE || c.op == SQLITE_INDEX_CONSTRAINT_GT) lowIdx = i;
      if (c.op == SQLITE_INDEX_CONSTRAINT_LE || c.op == SQLITE_INDEX_CONSTRAINT_LT) highIdx = i;
      if (c.op == SQLITE_INDEX_CONSTRAINT_EQ) lowIdx = highIdx = i;
    }
  }
  int argv = 1;
  info->idxNum = 0;
  if (idIdx >= 0) {
    info->idxNum = 1;
    info->aConstraintUsage[idIdx].argvIndex = argv++;
    info->estimatedCost = 1;
    info->estimatedRows = 1;
    return SQLITE_OK;
  }
  if (lowIdx >= 0) {
    info->idxNum |= 2;
    info->aConstraintUsage[lowIdx].argvIndex = argv++;
  }
  if (highIdx >= 0 && highIdx != lowIdx) {
    info->idxNum |= 4;
    info->aConstraintUsage[highIdx].argvIndex = argv++;
  } else if (highIdx >= 0) {
    info->idxNum |= 8;  // equality: one argument bounds both sides
  }
  info->estimatedCost = info->idxNum ? 1e4 : 1e7;
  info->estimatedRows = info->idxNum ? 10000 : 10000000;
  return SQLITE_OK;
}

int vtOpen(sqlite3_vtab* v, sqlite3_vtab_cursor** out) {
  auto* c = new Cursor;
  c->tab = reinterpret_cast<VTab*>(v);
  if (sqlite3_prepare_v2(c->tab->db, "SELECT text,demangled FROM main.strings WHERE id=?", -1, &c->nameStmt, nullptr) != SQLITE_OK) {
    delete c;
    return SQLITE_ERROR;
  }
  *out = &c->base;
  return SQLITE_OK;
}

int vtClose(sqlite3_vtab_cursor* cur) {
  auto* c = reinterpret_cast<Cursor*>(cur);
  sqlite3_finalize(c->chunks);
  sqlite3_finalize(c->nameStmt);
  delete c;
  return SQLITE_OK;
}

bool wanted(const Cursor* c) {
  return (kindBit(c->recs[c->i].kind) & c->tab->def->kinds) != 0 &&
         (c->onlyIndex < 0 || static_cast<std::int64_t>(c->i) == c->onlyIndex);
}

// Moves to the next record of the table's kinds, loading chunks as needed.
int advance(Cursor* c, bool first) {
  if (!first) ++c->i;
  for (;;) {
    while (c->i < c->recs.size() && !wanted(c)) ++c->i;
    if (c->i < c->recs.size()) return SQLITE_OK;
    int rc = sqlite3_step(c->chunks);
    if (rc == SQLITE_DONE) {
      c->eof = true;
      return SQLITE_OK;
    }
    if (rc != SQLITE_ROW) return rc;
    c->chunkId = static_cast<std::uint64_t>(sqlite3_column_int64(c->chunks, 0));
    c->track = static_cast<std::uint32_t>(sqlite3_column_int64(c->chunks, 1));
    auto* p = static_cast<const char*>(sqlite3_column_blob(c->chunks, 2));
    std::string_view blob(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(c->chunks, 2)));
    if (!codec::decode(blob, codec::kAllColumns, c->recs)) {
      sqlite3_free(c->tab->base.zErrMsg);
      c->tab->base.zErrMsg = sqlite3_mprintf("chunk %lld is malformed", static_cast<long long>(c->chunkId));
      return SQLITE_CORRUPT;
    }
    c->i = 0;
  }
}

int vtFilter(sqlite3_vtab_cursor* cur, int idxNum, const char*, int argc, sqlite3_value** argv) {
  auto* c = reinterpret_cast<Cursor*>(cur);
  sqlite3_finalize(c->chunks);
  c->chunks = nullptr;
  c->recs.clear();
  c->i = 0;
  c->eof = false;
  c->onlyIndex = -1;
  const char* q;
  std::int64_t lo = 0, hi = INT64_MAX;
  if (idxNum & 1) {
    q = "SELECT id,track,data FROM main.chunks WHERE id=?1";
  } else if (idxNum & (2 | 4 | 8)) {
    int a = 0;
    if (idxNum & 2) lo = argc > a ? sqlite3_value_int64(argv[a++]) : 0;
    if (idxNum & 4) hi = argc > a ? sqlite3_value_int64(argv[a++]) : INT64_MAX;
    if (idxNum & 8) hi = lo;
    // A record starting at t is in a chunk whose first start is in [t - kLongNs, t].
    lo = lo > static_cast<std::int64_t>(lod::kLongNs) ? lo - static_cast<std::int64_t>(lod::kLongNs) : 0;
    q = "SELECT c.id,c.track,c.data FROM main.tracks t JOIN main.chunks c ON c.track=t.id "
        "WHERE (t.kinds & ?3) != 0 AND (c.kinds & ?3) != 0 AND c.start_ns BETWEEN ?1 AND ?2 ORDER BY c.id";
  } else {
    q = "SELECT id,track,data FROM main.chunks WHERE (kinds & ?3) != 0 ORDER BY id";
  }
  if (sqlite3_prepare_v2(c->tab->db, q, -1, &c->chunks, nullptr) != SQLITE_OK) return SQLITE_ERROR;
  if (idxNum & 1) {
    auto id = static_cast<std::uint64_t>(argc > 0 ? sqlite3_value_int64(argv[0]) : 0);
    sqlite3_bind_int64(c->chunks, 1, static_cast<std::int64_t>(codec::chunkOf(id)));
    c->onlyIndex = codec::indexOf(id);
  } else {
    sqlite3_bind_int64(c->chunks, 1, lo);
    sqlite3_bind_int64(c->chunks, 2, hi);
    sqlite3_bind_int64(c->chunks, 3, c->tab->def->kinds);
  }
  return advance(c, true);
}

int vtNext(sqlite3_vtab_cursor* cur) { return advance(reinterpret_cast<Cursor*>(cur), false); }
int vtEof(sqlite3_vtab_cursor* cur) { return reinterpret_cast<Cursor*>(cur)->eof; }

const std::pair<std::string, std::string>& nameOf(Cursor* c, std::uint32_t id) {
  auto it = c->names.find(id);
  if (it != c->names.end()) return it->second;
  if (c->names.size() > 65536) c->names.clear();
  std::pair<std::string, std::string> v;
  sqlite3_bind_int64(c->nameStmt, 1, id);
  if (sqlite3_step(c->nameStmt) == SQLITE_ROW) {
    auto* text = reinterpret_cast<const char*>(sqlite3_column_text(c->nameStmt, 0));
    auto* dem = reinterpret_cast<const char*>(sqlite3_column_text(c->nameStmt, 1));
    v.second = text ? text : "";
    v.first = dem ? dem : v.second;
  }
  sqlite3_reset(c->nameStmt);
  return c->names.emplace(id, std::move(v)).first->second;
}

int vtColumn(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int col) {
  auto* c = reinterpret_cast<Cursor*>(cur);
  const GpuRecord& r = c->recs[c->i];
  auto i64 = [&](std::int64_t v) { sqlite3_result_int64(ctx, v); };
  auto text = [&](std::string_view s) { sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT); };
  switch (col) {
    case cId: i64(static_cast<std::int64_t>(codec::recordId(c->chunkId, static_cast<std::uint32_t>(c->i)))); break;
    case cKind: text(recordKindName(r.kind)); break;
    case cName: if (r.name) text(nameOf(c, r.name).first); else sqlite3_result_null(ctx); break;
    case cMangled: if (r.name) text(nameOf(c, r.name).second); else sqlite3_result_null(ctx); break;
    case cNameId: i64(r.name); break;
    case cPid: i64(r.pid); break;
    case cTid: i64(r.tid); break;
    case cDevice: i64(r.device); break;
    case cContext: i64(r.context); break;
    case cStream: i64(r.stream); break;
    case cCorrelation: i64(r.correlation); break;
    case cExternalId: i64(static_cast<std::int64_t>(r.externalId)); break;
    case cSite: i64(r.site); break;
    case cResult: i64(r.result); break;
    case cStart: i64(static_cast<std::int64_t>(r.start)); break;
    case cEnd: i64(static_cast<std::int64_t>(r.end)); break;
    case cDuration:
      if (isTimed(r)) i64(static_cast<std::int64_t>(effectiveEnd(r) - r.start));
      else sqlite3_result_null(ctx);
      break;
    case cBytes: i64(static_cast<std::int64_t>(r.bytes)); break;
    case cCopyKind:
      if (r.kind == RecordKind::Memcpy) text(copyKindName(r.copyKind)); else sqlite3_result_null(ctx);
      break;
    case cSrcKind: i64(r.srcKind); break;
    case cDstKind: i64(r.dstKind); break;
    case cSyncKind:
      if (r.kind == RecordKind::Synchronization) text(syncKindName(r.copyKind)); else sqlite3_result_null(ctx);
      break;
    case cGraphId: i64(static_cast<std::int64_t>(r.graphId)); break;
    case cGraphNodeId: i64(static_cast<std::int64_t>(r.graphNodeId)); break;
    case cGridX: i64(r.grid[0]); break;
    case cGridY: i64(r.grid[1]); break;
    case cGridZ: i64(r.grid[2]); break;
    case cBlockX: i64(r.block[0]); break;
    case cBlockY: i64(r.block[1]); break;
    case cBlockZ: i64(r.block[2]); break;
    case cRegisters: i64(r.registersPerThread); break;
    case cStaticShared: i64(r.staticSharedMemory); break;
    case cDynamicShared: i64(r.dynamicSharedMemory); break;
    case cTrack: i64(c->track); break;
    default: sqlite3_result_null(ctx); break;
  }
  return SQLITE_OK;
}

int vtRowid(sqlite3_vtab_cursor* cur, sqlite3_int64* out) {
  auto* c = reinterpret_cast<Cursor*>(cur);
  *out = static_cast<sqlite3_int64>(codec::recordId(c->chunkId, static_cast<std::uint32_t>(c->i)));
  return SQLITE_OK;
}

sqlite3_module makeModule() {
  sqlite3_module m{};
  m.iVersion = 1;
  m.xCreate = vtConnect;
  m.xConnect = vtConnect;
  m.xBestIndex = vtBestIndex;
  m.xDisconnect = vtDisconnect;
  m.xDestroy = vtDisconnect;
  m.xOpen = vtOpen;
  m.xClose = vtClose;
  m.xFilter = vtFilter;
  m.xNext = vtNext;
  m.xEof = vtEof;
  m.xColumn = vtColumn;
  m.xRowid = vtRowid;
  return m;
}
const sqlite3_module kModule = makeModule();

const char* actionWord(int action) {
  switch (action) {
    case SQLITE_INSERT: return "insert into";
    case SQLITE_UPDATE: return "update";
    case SQLITE_DELETE: return "delete from";
    case SQLITE_ATTACH: return "attach";
    case SQLITE_DETACH: return "detach";
    case SQLITE_PRAGMA: return "run the pragma";
    case SQLITE_TRANSACTION: return "control a transaction";
    case SQLITE_SAVEPOINT: return "make a savepoint";
    case SQLITE_ALTER_TABLE: return "alter";
    case SQLITE_REINDEX: return "reindex";
    case SQLITE_ANALYZE: return "analyze";
    case SQLITE_DROP_TABLE: case SQLITE_DROP_TEMP_TABLE: case SQLITE_DROP_INDEX: case SQLITE_DROP_TEMP_INDEX:
    case SQLITE_DROP_VIEW: case SQLITE_DROP_TEMP_VIEW: case SQLITE_DROP_TRIGGER: case SQLITE_DROP_TEMP_TRIGGER:
    case SQLITE_DROP_VTABLE:
      return "drop";
    default: return "create";
  }
}

int authorize(void* p, int action, const char* a, const char* b, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_PRAGMA:
      // Reading the schema is fine; setting anything is not.
      if (!b && a && (std::string_view(a) == "table_info" || std::string_view(a) == "table_xinfo" ||
                      std::string_view(a) == "table_list" || std::string_view(a) == "index_list")) {
        return SQLITE_OK;
      }
      if (b && a && (std::string_view(a) == "table_info" || std::string_view(a) == "table_xinfo" ||
                     std::string_view(a) == "index_list")) {
        return SQLITE_OK;
      }
      break;
    default:
      break;
  }
  // DDL first writes the schema table; let that pass so that the statement's own action (create,
  // drop) is the one refused and named. The connection is read-only whatever happens here.
  if ((action == SQLITE_INSERT || action == SQLITE_UPDATE || action == SQLITE_DELETE) && a &&
      (std::string_view(a) == "sqlite_master" || std::string_view(a) == "sqlite_temp_master")) {
    return SQLITE_OK;
  }
  auto* refused = static_cast<std::string*>(p);  // what was refused, for the error message
  if (refused->empty()) {
    *refused = std::string(actionWord(action)) + (a && action != SQLITE_FUNCTION ? std::string(" ") + a : "");
  }
  return SQLITE_DENY;
}

}  // namespace

Result<SqlResult> Store::sql(std::string_view query, std::size_t maxRows, unsigned timeoutMs) {
  if (auto r = flush(); !r) return r.takeError();
  Impl& m = *impl_;
  if (!m.reader) {
    auto db = sql::Db::open(m.path, SQLITE_OPEN_READONLY, kIo);
    if (!db) return db.takeError();
    if (sqlite3_create_module(db->get(), "strata_records", &kModule, nullptr) != SQLITE_OK) {
      return Error{kIo, "sql: registering the record tables: " + db->message(), true};
    }
    for (const TableDef& d : tableDefs()) {
      std::string ddl = std::string("CREATE VIRTUAL TABLE temp.") + d.name + " USING strata_records(" + d.name + ")";
      if (auto r = db->exec(ddl.c_str(), kIo); !r) return Error{kIo, "sql: " + r.error().message, true};
    }
    (void)db->exec("PRAGMA cache_size=-8192", kIo);
    sqlite3_set_authorizer(db->get(), authorize, &m.sqlRefused);
    m.reader = std::move(*db);
  }
  m.sqlRefused.clear();
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  std::string q(query);
  int rc = sqlite3_prepare_v2(m.reader.get(), q.c_str(), static_cast<int>(q.size()), &raw, &tail);
  struct Fin {
    sqlite3_stmt* s;
    ~Fin() { sqlite3_finalize(s); }
  } fin{raw};
  if (rc != SQLITE_OK) {
    if (!m.sqlRefused.empty()) {
      return Error{kSqlRejected, "sql: refused: the statement would " + m.sqlRefused + "; only reading (SELECT) is allowed", true};
    }
    // A write to a record table (a virtual table without writes) fails before the authorizer
    // sees it: still a write refused.
    std::string_view why = sqlite3_errmsg(m.reader.get());
    if (why.find("may not be modified") != std::string_view::npos)
      return Error{kSqlRejected, "sql: refused: " + std::string(why) + "; only reading (SELECT) is allowed", true};
    return Error{kSql, std::string("sql: ") + std::string(why), true};
  }
  if (!raw) return Error{kSqlRejected, "sql: no statement (an empty query)", true};
  for (const char* p = tail; p && *p; ++p) {
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != ';') {
      return Error{kSqlRejected, "sql: one statement at a time (found more after the first)", true};
    }
  }
  if (!sqlite3_stmt_readonly(raw)) return Error{kSqlRejected, "sql: refused: only reading (SELECT) is allowed", true};

  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  sqlite3_progress_handler(m.reader.get(), 10000, [](void* p) -> int {
    return std::chrono::steady_clock::now() > *static_cast<std::chrono::steady_clock::time_point*>(p) ? 1 : 0;
  }, &deadline);
  SqlResult result;
  int n = sqlite3_column_count(raw);
  for (int c = 0; c < n; ++c) result.columns.emplace_back(sqlite3_column_name(raw, c));
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    if (result.rows.size() == maxRows) {
      result.truncated = true;
      break;
    }
    std::vector<SqlValue> row;
    row.reserve(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) {
      switch (sqlite3_column_type(raw, c)) {
        case SQLITE_INTEGER: row.emplace_back(static_cast<std::int64_t>(sqlite3_column_int64(raw, c))); break;
        case SQLITE_FLOAT: row.emplace_back(sqlite3_column_double(raw, c)); break;
        case SQLITE_TEXT: {
          std::string s(reinterpret_cast<const char*>(sqlite3_column_text(raw, c)), static_cast<std::size_t>(sqlite3_column_bytes(raw, c)));
          if (s.size() > kMaxCellText) s = s.substr(0, kMaxCellText) + "…";
          row.emplace_back(std::move(s));
          break;
        }
        case SQLITE_BLOB: row.emplace_back("<blob of " + std::to_string(sqlite3_column_bytes(raw, c)) + " bytes>"); break;
        default: row.emplace_back(std::monostate{}); break;
      }
    }
    result.rows.push_back(std::move(row));
  }
  sqlite3_progress_handler(m.reader.get(), 0, nullptr, nullptr);
  if (rc == SQLITE_INTERRUPT) {
    return Error{kInterrupted, "sql: stopped after " + std::to_string(timeoutMs) +
                                   " ms; narrow the query (WHERE start_ns BETWEEN ...), and join record tables "
                                   "through a materialized side (WITH a AS MATERIALIZED (SELECT ... FROM api) ...)", true};
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error{kSql, std::string("sql: ") + sqlite3_errmsg(m.reader.get()), true};
  return result;
}

}  // namespace strata::cuda
