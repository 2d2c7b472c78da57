// Importers, so recorded traces open without a GPU: torch.profiler/Kineto chrome-trace JSON
// (.json, .json.gz), Nsight Systems SQLite exports, and Strata's own store files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "strata/cuda/store.hpp"
#include "strata/result.hpp"

namespace strata::cuda {

enum class TraceFormat { Unknown, KinetoJson, KinetoJsonGz, NsysSqlite, StrataStore };
std::string_view traceFormatName(TraceFormat format);

// Looks at the file's first bytes (and, for SQLite, its tables).
Result<TraceFormat> detectTraceFormat(const std::string& path);

struct ImportReport {
  TraceFormat format = TraceFormat::Unknown;
  std::uint64_t events = 0;   // events (JSON) or rows (SQLite) read
  std::uint64_t records = 0;  // records stored
  std::map<std::string, std::uint64_t> skipped;  // events not stored, by reason
  std::uint32_t devices = 0;  // devices whose properties were recorded
};

// How far an import got, told every few thousand events: `done` of `total` (bytes of the file
// for JSON, rows for SQLite). Returning false abandons the import: an error with
// errors::kCancelled, nothing of the file in the store. Called on the importing thread.
using ImportProgress = std::function<bool(std::uint64_t done, std::uint64_t total)>;

// Each importer writes into `store` in one transaction: a malformed or truncated file is an
// error naming the file and the position (byte offset and line:column for JSON, table and row
// for SQLite), and leaves nothing of that file in the store.
Result<ImportReport> importKineto(const std::string& path, Store& store, const ImportProgress& progress = {});
Result<ImportReport> importNsys(const std::string& path, Store& store, const ImportProgress& progress = {});
Result<ImportReport> importStore(const std::string& path, Store& store, const ImportProgress& progress = {});
// By detected format.
Result<ImportReport> importTrace(const std::string& path, Store& store, const ImportProgress& progress = {});

// What `launch {"trace": PATH}` needs: a Strata store is opened as it is; anything else is
// imported into a new store at `storePath`.
struct OpenedTrace {
  std::unique_ptr<Store> store;
  ImportReport report;
};
Result<OpenedTrace> openTrace(const std::string& path, const std::string& storePath,
                              const ImportProgress& progress = {});

// The error an import abandoned through its ImportProgress returns.
Error importCancelled(const std::string& path);

}  // namespace strata::cuda
