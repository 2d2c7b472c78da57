// !sql: read-only statements over the documented tables give the right answers with bounded
// output; anything that would write, or more than one statement, is refused with the reason.
#include <doctest/doctest.h>

#include "helpers.hpp"
#include "strata/cuda/store_json.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;

namespace {

constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000ull;

struct Fixture {
  TempDir dir;
  std::unique_ptr<Store> store = newStore(dir);
  std::vector<GpuRecord> records;

  Fixture() {
    std::uint32_t names[3] = {store->internName("_Z5saxpyifPfS_"), store->internName("reduce"), store->internName("copy")};
    std::uint32_t launch = store->internName("cudaLaunchKernel");
    for (int i = 0; i < 6000; ++i) {
      std::uint64_t t = kT0 + static_cast<std::uint64_t>(i) * 7000;
      records.push_back(apiRecord(t, t + 1500, launch, 10, 11, static_cast<std::uint32_t>(i + 1)));
      records.push_back(kernelRecord(t + 2000, t + 2000 + 1000 + static_cast<std::uint64_t>(i % 5) * 100, names[i % 3], 7 + i % 2, 0,
                                     static_cast<std::uint32_t>(i + 1)));
    }
    REQUIRE(store->ingest(records).ok());
  }

  std::int64_t scalar(const std::string& q) {
    auto r = store->sql(q, 10);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    REQUIRE(r->rows.size() == 1);
    return std::get<std::int64_t>(r->rows[0][0]);
  }
};

}  // namespace

TEST_CASE("sql answers from the record tables match what was stored") {
  Fixture f;
  CHECK(f.scalar("SELECT count(*) FROM kernels") == 6000);
  CHECK(f.scalar("SELECT count(*) FROM api") == 6000);
  CHECK(f.scalar("SELECT count(*) FROM records") == 12000);
  CHECK(f.scalar("SELECT count(*) FROM copies") == 0);
  auto byName = f.store->sql("SELECT name, count(*), sum(duration_ns) FROM kernels GROUP BY name ORDER BY name", 10);
  REQUIRE(byName.ok());
  REQUIRE(byName->rows.size() == 3);
  CHECK(byName->columns == std::vector<std::string>{"name", "count(*)", "sum(duration_ns)"});
  CHECK(std::get<std::string>(byName->rows[2][0]) == "saxpy(int, float, float*, float*)");
  auto sum = f.store->summary(5);
  REQUIRE(sum.ok());
  for (auto& k : sum->kernels) {
    for (auto& row : byName->rows) {
      if (std::get<std::string>(row[0]) == k.name) {
        CHECK(static_cast<std::uint64_t>(std::get<std::int64_t>(row[1])) == k.count);
        CHECK(static_cast<std::uint64_t>(std::get<std::int64_t>(row[2])) == k.totalNs);
      }
    }
  }
  // Time ranges use the chunk index; the answers equal a pass over what was generated.
  std::uint64_t a = kT0 + 1'234'567, b = kT0 + 9'876'543;
  std::int64_t between = 0, from = 0, before = 0;
  for (auto& r : f.records) {
    between += r.start >= a && r.start <= b;
    from += r.start >= a;
    before += r.start < b;
  }
  CHECK(f.scalar("SELECT count(*) FROM records WHERE start_ns BETWEEN " + std::to_string(a) + " AND " + std::to_string(b)) == between);
  CHECK(f.scalar("SELECT count(*) FROM records WHERE start_ns >= " + std::to_string(a)) == from);
  CHECK(f.scalar("SELECT count(*) FROM records WHERE start_ns < " + std::to_string(b)) == before);
  CHECK(f.scalar("SELECT count(*) FROM kernels WHERE start_ns = " + std::to_string(kT0 + 2000)) == 1);
  // One record by id, and a join on correlation.
  std::int64_t id = f.scalar("SELECT id FROM kernels WHERE correlation = 4321");
  auto one = f.store->sql("SELECT correlation, stream FROM kernels WHERE id = " + std::to_string(id), 10);
  REQUIRE(one.ok());
  REQUIRE(one->rows.size() == 1);
  CHECK(std::get<std::int64_t>(one->rows[0][0]) == 4321);
  // Joins between record tables go through a materialized side (SQLite indexes it on the fly).
  CHECK(f.scalar("WITH a AS MATERIALIZED (SELECT correlation, start_ns FROM api) "
                 "SELECT count(*) FROM kernels k JOIN a ON a.correlation = k.correlation WHERE a.start_ns < k.start_ns") == 6000);
  // The documented plain tables.
  CHECK(f.scalar("SELECT count(*) FROM tracks") == 3);
  CHECK(f.scalar("SELECT count FROM kernel_stats WHERE name = (SELECT id FROM strings WHERE text = 'reduce')") == 2000);
  auto chunk = f.store->sql("SELECT data FROM chunks LIMIT 1", 1);
  REQUIRE(chunk.ok());
  CHECK(std::get<std::string>(chunk->rows[0][0]).starts_with("<blob of "));
  auto schema = f.store->sql("PRAGMA table_info(kernels)", 100);
  REQUIRE(schema.ok());
  CHECK(schema->rows.size() >= 20);
}

TEST_CASE("sql output is bounded: rows capped, long queries stopped") {
  Fixture f;
  auto r = f.store->sql("SELECT * FROM records", 10);
  REQUIRE(r.ok());
  CHECK(r->rows.size() == 10);
  CHECK(r->truncated);
  auto all = f.store->sql("SELECT id FROM kernels", 6000);
  REQUIRE(all.ok());
  CHECK(all->rows.size() == 6000);
  CHECK_FALSE(all->truncated);
  auto j = toJson(*r);
  CHECK(j.at("truncated").as_bool());
  CHECK(j.at("rows").as_array().size() == 10);
  auto slow = f.store->sql("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", 10, 200);
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.error().id == store_errors::kInterrupted);
  CHECK(slow.error().message.find("stopped after 200 ms") != std::string::npos);
}

TEST_CASE("sql refuses anything that writes, and says what it refused") {
  Fixture f;
  struct Case {
    const char* query;
    const char* says;
  };
  const Case refused[] = {
      {"INSERT INTO meta VALUES('x','y')", "insert into meta"},
      {"UPDATE meta SET value = 'z'", "update meta"},
      {"DELETE FROM chunks", "delete from chunks"},
      {"DROP TABLE chunks", "drop"},
      {"CREATE TABLE t(a)", "create"},
      {"CREATE TEMP TABLE t(a)", "create"},
      {"CREATE TEMP VIEW v AS SELECT 1", "create"},
      {"ATTACH DATABASE '/tmp/strata-attach-test.db' AS other", "attach"},
      {"PRAGMA journal_mode=DELETE", "pragma journal_mode"},
      {"PRAGMA writable_schema=1", "pragma writable_schema"},
      {"BEGIN", "transaction"},
      {"SELECT 1; DELETE FROM meta", "one statement at a time"},
      {"   ", "no statement"},
      {"INSERT INTO kernels(id) VALUES (1)", "insert into kernels"},
      // Record tables are virtual and take no writes: refused before the authorizer is asked.
      {"DELETE FROM kernels", "table kernels may not be modified"},
      {"UPDATE copies SET bytes = 0", "table copies may not be modified"},
  };
  for (const Case& c : refused) {
    INFO(std::string(c.query));
    auto r = f.store->sql(c.query, 10);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == store_errors::kSqlRejected);
    INFO(r.error().message);
    CHECK(r.error().message.find(c.says) != std::string::npos);
  }
  auto syntax = f.store->sql("SELEC 1", 10);
  REQUIRE_FALSE(syntax.ok());
  CHECK(syntax.error().id == store_errors::kSql);
  CHECK(syntax.error().message.find("syntax error") != std::string::npos);
  auto missing = f.store->sql("SELECT * FROM nope", 10);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "sql: no such table: nope");
  // Nothing was written, and the store goes on.
  CHECK(f.scalar("SELECT count(*) FROM records") == 12000);
  CHECK(f.scalar("SELECT count(*) FROM meta") == 2);
  std::vector<GpuRecord> more{kernelRecord(kT0 + 100'000'000'000, kT0 + 100'000'001'000, 1)};
  REQUIRE(f.store->ingest(more).ok());
  CHECK(f.scalar("SELECT count(*) FROM kernels") == 6001);
}
