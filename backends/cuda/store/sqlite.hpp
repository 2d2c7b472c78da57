// Thin RAII over the SQLite C API: a connection, prepared statements, errors as Result.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "strata/result.hpp"

namespace strata::cuda::sql {

class Db {
 public:
  Db() = default;
  explicit Db(sqlite3* db) : db_(db) {}
  Db(Db&& o) noexcept : db_(std::exchange(o.db_, nullptr)) {}
  Db& operator=(Db&& o) noexcept {
    if (this != &o) {
      reset();
      db_ = std::exchange(o.db_, nullptr);
    }
    return *this;
  }
  ~Db() { reset(); }
  void reset() {
    if (db_) sqlite3_close_v2(db_);
    db_ = nullptr;
  }
  sqlite3* get() const { return db_; }
  explicit operator bool() const { return db_ != nullptr; }

  static Result<Db> open(const std::string& path, int flags, ErrorId errorId);
  Result<void> exec(const char* sql, ErrorId errorId) const;
  std::string message() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt() = default;
  Stmt(Stmt&& o) noexcept : st_(std::exchange(o.st_, nullptr)) {}
  Stmt& operator=(Stmt&& o) noexcept {
    if (this != &o) {
      if (st_) sqlite3_finalize(st_);
      st_ = std::exchange(o.st_, nullptr);
    }
    return *this;
  }
  ~Stmt() {
    if (st_) sqlite3_finalize(st_);
  }
  static Result<Stmt> prepare(const Db& db, std::string_view sql, ErrorId errorId, bool persistent = true);
  sqlite3_stmt* get() const { return st_; }
  explicit operator bool() const { return st_ != nullptr; }

  Stmt& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Stmt& bindU(int i, std::uint64_t v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bindDouble(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  Stmt& bindText(int i, std::string_view v) {
    sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bindStaticText(int i, std::string_view v) {
    sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  Stmt& bindBlob(int i, const void* p, std::size_t n) {
    sqlite3_bind_blob64(st_, i, p, n, SQLITE_STATIC);
    return *this;
  }
  Stmt& bindNull(int i) {
    sqlite3_bind_null(st_, i);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE, or an error code.
  int step() { return sqlite3_step(st_); }
  void reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }
  std::int64_t i64(int c) const { return sqlite3_column_int64(st_, c); }
  std::uint64_t u64(int c) const { return static_cast<std::uint64_t>(sqlite3_column_int64(st_, c)); }
  bool isNull(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
  std::string_view text(int c) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(st_, c)))
             : std::string_view();
  }
  std::string_view blob(int c) const {
    auto* p = static_cast<const char*>(sqlite3_column_blob(st_, c));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(st_, c)))
             : std::string_view();
  }

 private:
  sqlite3_stmt* st_ = nullptr;
};

// Runs a statement that returns no rows; resets it either way.
Result<void> run(const Db& db, Stmt& st, ErrorId errorId, std::string_view what);

}  // namespace strata::cuda::sql
