// The Nsight Systems importer on SQLite files the tests build with nsys's table and column
// names (two versions' worth of columns), and on broken ones: errors name file, table and row.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include "helpers.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;

namespace {

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO(sql.substr(0, 120));
  REQUIRE_MESSAGE(rc == SQLITE_OK, (err ? err : ""));
}

constexpr std::int64_t kGlobalPid = (std::int64_t{1} << 56) | (std::int64_t{4242} << 24);
constexpr std::int64_t kGlobalTid = kGlobalPid | 4243;
constexpr std::uint64_t kSessionStart = 1'700'000'000'000'000'000ull;

// A report of nsys 2024+ (mangledName, graphId, the session's start time) or of an older
// version (fewer columns, relative times only).
void buildNsys(const std::string& path, bool newer, int kernels = 100) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL)");
  exec(db, "INSERT INTO StringIds VALUES (1,'cudaLaunchKernel'),(2,'cuLaunchKernel'),(3,'_Z6matmulPfS_S_i'),"
           "(4,'matmul(float*, float*, float*, int)'),(5,'matmul'),(6,'iteration'),(7,'cudaMemcpyAsync')");
  std::string kernelCols = "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
                           "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
                           "shortName INTEGER NOT NULL, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, "
                           "blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER";
  if (newer) kernelCols += ", greenContextId INTEGER, mangledName INTEGER, launchType INTEGER, graphNodeId INTEGER, graphId INTEGER";
  exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(" + kernelCols + ")");
  exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
           "globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER)");
  exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
           "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, "
           "copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER)");
  exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
           "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, "
           "bytes INTEGER NOT NULL, memKind INTEGER)");
  exec(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
           "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, "
           "eventId INTEGER NOT NULL)");
  exec(db, "CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
           "category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER)");
  exec(db, "CREATE TABLE TARGET_INFO_GPU(id INTEGER NOT NULL, name TEXT, smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, "
           "maxThreadsPerBlock INTEGER, threadsPerWarp INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, "
           "maxRegistersPerBlock INTEGER, maxRegistersPerSm INTEGER, maxShmemPerBlock INTEGER, maxShmemPerSm INTEGER, "
           "maxShmemPerBlockOptin INTEGER, totalMemory INTEGER" + std::string(newer ? ", cuDevice INTEGER" : "") + ")");
  exec(db, "INSERT INTO TARGET_INFO_GPU VALUES (0,'NVIDIA H200',132,9,0,1024,32,64,32,65536,65536,49152,233472,232448,150000000000" +
               std::string(newer ? ",0" : "") + ")");
  if (newer) {
    exec(db, "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER, utcTime TEXT, localTime TEXT)");
    exec(db, "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (" + std::to_string(kSessionStart) + ",'','')");
  }
  exec(db, "CREATE TABLE ENUM_NSYS_EVENT_TYPE(id INTEGER PRIMARY KEY, name TEXT, label TEXT)");
  exec(db, "BEGIN");
  for (int i = 0; i < kernels; ++i) {
    std::int64_t t = 1'000'000 + i * 10'000;
    std::string corr = std::to_string(100 + i);
    bool driver = i % 10 == 0;
    exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(t) + "," + std::to_string(t + 3000) +
                 ",1," + std::to_string(kGlobalTid) + "," + corr + "," + (driver ? "2" : "1") + ",0,NULL)");
    std::string values = std::to_string(t + 5000) + "," + std::to_string(t + 9000) + ",0,1,7," + corr + "," +
                         std::to_string(kGlobalPid) + ",4,5,128,1,1,256,1,1,40,1024,2048";
    if (newer) values += ",NULL,3,0,0,0";
    exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + values + ")");
  }
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (500000,501000,1," + std::to_string(kGlobalTid) + ",99,7,0,NULL)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (502000,512000,0,1,8,99," + std::to_string(kGlobalPid) + ",65536,2,3,2)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (513000,514000,0,1,8,98," + std::to_string(kGlobalPid) + ",0,512,3)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (600000,700000,0,1,7,97," + std::to_string(kGlobalPid) + ",3,0)");
  // A push/pop range with inline text, a start/end range by string id, a mark, and a domain
  // creation row (not an event).
  exec(db, "INSERT INTO NVTX_EVENTS VALUES (900000,2000000,59,NULL,NULL,NULL,'step 1'," + std::to_string(kGlobalTid) + ",NULL,NULL,NULL)");
  exec(db, "INSERT INTO NVTX_EVENTS VALUES (950000,1500000,60,1,NULL,NULL,NULL," + std::to_string(kGlobalTid) + ",NULL,6,NULL)");
  exec(db, "INSERT INTO NVTX_EVENTS VALUES (960000,NULL,34,NULL,NULL,NULL,'mark'," + std::to_string(kGlobalTid) + ",NULL,NULL,NULL)");
  exec(db, "INSERT INTO NVTX_EVENTS VALUES (10,NULL,75,NULL,NULL,NULL,'my domain',NULL,NULL,NULL,1)");
  exec(db, "COMMIT");
  sqlite3_close(db);
}

}  // namespace

TEST_CASE("Nsight Systems SQLite, newer and older columns") {
  for (bool newer : {true, false}) {
    INFO("newer ", newer);
    TempDir dir;
    buildNsys(dir.file("r.sqlite"), newer);
    auto fmt = detectTraceFormat(dir.file("r.sqlite"));
    REQUIRE(fmt.ok());
    CHECK(*fmt == TraceFormat::NsysSqlite);
    auto store = newStore(dir);
    auto r = importTrace(dir.file("r.sqlite"), *store);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    CHECK(r->format == TraceFormat::NsysSqlite);
    CHECK(r->records == 100 + 101 + 1 + 1 + 1 + 3);
    CHECK(r->devices == 1);
    CHECK(r->skipped.at("NVTX_EVENTS rows without a usable event") == 1);
    std::uint64_t base = newer ? kSessionStart : 0;
    auto s = store->summary(5);
    REQUIRE(s.ok());
    REQUIRE(s->kernels.size() == 1);
    CHECK(s->kernels[0].name == "matmul(float*, float*, float*, int)");
    CHECK(s->kernels[0].count == 100);
    CHECK(s->kernels[0].totalNs == 100 * 4000);
    CHECK(s->timeSpan.startNs == base + 500000);
    REQUIRE(s->copies.size() == 2);
    CHECK(s->copies[0].kind == "DtoH");
    CHECK(s->copies[0].bytes == 65536);
    CHECK(s->syncs.at(0).kind == "stream");
    CHECK(s->syncs.at(0).totalNs == 100000);
    REQUIRE(s->devices.size() == 1);
    CHECK(s->devices[0].name == "NVIDIA H200");

    auto api = store->sql("SELECT kind, count(*) FROM api GROUP BY kind ORDER BY kind", 10);
    REQUIRE(api.ok());
    REQUIRE(api->rows.size() == 2);
    CHECK(std::get<std::string>(api->rows[0][0]) == "driver");
    CHECK(std::get<std::int64_t>(api->rows[0][1]) == 10);
    CHECK(std::get<std::int64_t>(api->rows[1][1]) == 91);
    auto k = store->sql("SELECT id, pid, stream, grid_x, block_x, registers, static_shared, dynamic_shared, mangled "
                        "FROM kernels ORDER BY start_ns LIMIT 1", 1);
    REQUIRE(k.ok());
    auto& row = k->rows.at(0);
    CHECK(std::get<std::int64_t>(row[1]) == 4242);
    CHECK(std::get<std::int64_t>(row[2]) == 7);
    CHECK(std::get<std::int64_t>(row[3]) == 128);
    CHECK(std::get<std::int64_t>(row[4]) == 256);
    CHECK(std::get<std::int64_t>(row[5]) == 40);
    CHECK(std::get<std::int64_t>(row[6]) == 1024);
    CHECK(std::get<std::int64_t>(row[7]) == 2048);
    CHECK(std::get<std::string>(row[8]) == (newer ? "_Z6matmulPfS_S_i" : "matmul(float*, float*, float*, int)"));
    auto d = store->kernel(static_cast<std::uint64_t>(std::get<std::int64_t>(row[0])));
    REQUIRE(d.ok());
    REQUIRE(d->launch);
    CHECK(d->launch->name == "cuLaunchKernel");  // correlation 100: the first, a driver call
    CHECK(d->launch->tid == 4243);
    CHECK(d->device->maxThreadsPerMultiprocessor == 2048);
    auto nvtx = store->sql("SELECT name, start_ns, end_ns, tid FROM markers ORDER BY start_ns", 10);
    REQUIRE(nvtx.ok());
    REQUIRE(nvtx->rows.size() == 3);
    CHECK(std::get<std::string>(nvtx->rows[0][0]) == "step 1");
    CHECK(std::get<std::string>(nvtx->rows[1][0]) == "iteration");
    CHECK(std::get<std::string>(nvtx->rows[2][0]) == "mark");
    CHECK(std::get<std::int64_t>(nvtx->rows[2][1]) == std::get<std::int64_t>(nvtx->rows[2][2]));
    CHECK(std::get<std::int64_t>(nvtx->rows[0][3]) == 4243);
  }
}

TEST_CASE("Nsight Systems SQLite: broken files are errors that name them, and import nothing") {
  TempDir dir;
  auto store = newStore(dir);
  std::uint32_t k = store->internName("before");
  std::vector<GpuRecord> one{kernelRecord(5000, 6000, k)};
  REQUIRE(store->ingest(one).ok());

  // Truncated: the tail of the file (where the later pages are) cut off.
  buildNsys(dir.file("full.sqlite"), true, 3000);
  std::string bytes = readFile(dir.file("full.sqlite"));
  writeFile(dir.file("cut.sqlite"), bytes.substr(0, bytes.size() / 2));
  auto r = importTrace(dir.file("cut.sqlite"), *store);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find(dir.file("cut.sqlite")) == 0);
  CHECK(r.error().message.find("malformed") != std::string::npos);
  auto s = store->summary(5);
  REQUIRE(s.ok());
  CHECK(s->records == 1);
  CHECK(s->kernels.size() == 1);

  // Garbage in the middle of the pages.
  std::string garbled = bytes;
  for (std::size_t i = garbled.size() / 2; i < garbled.size() / 2 + 20000 && i < garbled.size(); ++i) garbled[i] = static_cast<char>(i * 31);
  writeFile(dir.file("garbled.sqlite"), garbled);
  auto g = importNsys(dir.file("garbled.sqlite"), *store);
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().message.find(dir.file("garbled.sqlite")) == 0);
  CHECK(g.error().message.find("malformed") != std::string::npos);
  CHECK(store->summary(5)->records == 1);

  // An SQLite file of some other program.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(dir.file("other.sqlite").c_str(), &db) == SQLITE_OK);
  exec(db, "CREATE TABLE t(x)");
  sqlite3_close(db);
  auto o = importNsys(dir.file("other.sqlite"), *store);
  REQUIRE_FALSE(o.ok());
  CHECK(o.error().message.find("without Nsight Systems tables") != std::string::npos);
  auto detected = detectTraceFormat(dir.file("other.sqlite"));
  REQUIRE_FALSE(detected.ok());

  // Not SQLite at all.
  writeFile(dir.file("text.sqlite"), "not a database, just text that is long enough to be read as a header");
  auto t = importNsys(dir.file("text.sqlite"), *store);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message.find(dir.file("text.sqlite")) == 0);
  CHECK(t.error().message.find("not a database") != std::string::npos);
  CHECK(store->summary(5)->records == 1);
}

TEST_CASE("Nsight Systems SQLite: progress counts rows; abandoned, the import keeps nothing") {
  TempDir dir;
  buildNsys(dir.file("r.sqlite"), true, 9000);
  auto store = newStore(dir);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
  auto r = importTrace(dir.file("r.sqlite"), *store, [&](std::uint64_t done, std::uint64_t total) {
    seen.emplace_back(done, total);
    return true;
  });
  REQUIRE(r.ok());
  // 9000 kernels, their 9000 calls, and the few other rows: told every 8192 rows.
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].first == 8192);
  CHECK(seen[1].first == 16384);
  CHECK(seen[0].second == r->events);
  auto again = newStore(dir, "again.strata");
  int calls = 0;
  auto cancelled = importTrace(dir.file("r.sqlite"), *again, [&](std::uint64_t, std::uint64_t) { return ++calls < 2; });
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.error().id == strata::errors::kCancelled);
  CHECK(again->counts().records == 0);
}
