// Thin RAII over the SQLite C API.
#include "sqlite.hpp"

namespace strata::cuda::sql {

Result<Db> Db::open(const std::string& path, int flags, ErrorId errorId) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    return Error{errorId, path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)), true};
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Result<void> Db::exec(const char* sql, ErrorId errorId) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : message();
    sqlite3_free(err);
    return Error{errorId, msg, true};
  }
  return {};
}

Result<Stmt> Stmt::prepare(const Db& db, std::string_view sql, ErrorId errorId, bool persistent) {
  Stmt st;
  if (sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()),
                         persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st.st_, nullptr) != SQLITE_OK) {
    return Error{errorId, db.message() + " (in: " + std::string(sql.substr(0, 80)) + ")", true};
  }
  return st;
}

Result<void> run(const Db& db, Stmt& st, ErrorId errorId, std::string_view what) {
  int rc = st.step();
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    std::string msg = std::string(what) + ": " + db.message();
    st.reset();
    return Error{errorId, msg, true};
  }
  st.reset();
  return {};
}

}  // namespace strata::cuda::sql
