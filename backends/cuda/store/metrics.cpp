// kernel_metrics: hardware metrics measured at profile requests (CUPTI's range profiler), or
// why a request measured none, kept beside the records they describe (joined by pid, correlation).
#include <cmath>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

constexpr const char* kColumns =
    "pid,correlation,kernel,device,request,time_ns,passes,sm_throughput_pct,dram_throughput_pct,"
    "achieved_occupancy_pct,duration_ns,error,result";

void bindValue(sql::Stmt& s, int i, const std::optional<double>& v) {
  if (v && std::isfinite(*v)) s.bindDouble(i, *v);
  else s.bindNull(i);
}

std::optional<double> value(const sql::Stmt& s, int c) {
  if (s.isNull(c)) return std::nullopt;
  return sqlite3_column_double(s.get(), c);
}

KernelMetrics row(const sql::Stmt& s) {
  KernelMetrics k;
  k.pid = static_cast<std::uint32_t>(s.i64(0));
  k.correlation = static_cast<std::uint32_t>(s.i64(1));
  k.kernel = std::string(s.text(2));
  k.device = static_cast<std::uint32_t>(s.i64(3));
  k.request = static_cast<std::uint32_t>(s.i64(4));
  k.timeNs = s.u64(5);
  k.passes = static_cast<std::uint32_t>(s.i64(6));
  k.smThroughputPct = value(s, 7);
  k.dramThroughputPct = value(s, 8);
  k.achievedOccupancyPct = value(s, 9);
  k.durationNs = value(s, 10);
  k.error = std::string(s.text(11));
  k.result = static_cast<std::int32_t>(s.i64(12));
  return k;
}

}  // namespace

Result<void> Store::addKernelMetrics(const KernelMetrics& k) {
  Impl& m = *impl_;
  if (auto r = m.beginWrite(); !r) return r;
  // Rare (at most 64 launches per request): a statement made per call.
  auto s = sql::Stmt::prepare(m.db, std::string("INSERT INTO kernel_metrics(") + kColumns +
                                        ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", kIo, false);
  if (!s) return s.takeError();
  s->bind(1, k.pid).bind(2, k.correlation).bindText(3, k.kernel).bind(4, k.device).bind(5, k.request)
      .bindU(6, k.timeNs).bind(7, k.passes);
  bindValue(*s, 8, k.smThroughputPct);
  bindValue(*s, 9, k.dramThroughputPct);
  bindValue(*s, 10, k.achievedOccupancyPct);
  bindValue(*s, 11, k.durationNs);
  if (k.error.empty()) s->bindNull(12);
  else s->bindText(12, k.error);
  s->bind(13, k.result);
  return sql::run(m.db, *s, kIo, "kernel_metrics");
}

Result<std::vector<KernelMetrics>> Store::kernelMetrics(std::uint32_t pid) {
  if (auto r = flush(); !r) return r.takeError();
  std::vector<KernelMetrics> all;
  // A store opened read-only from before kernel_metrics existed has none.
  auto s = sql::Stmt::prepare(impl_->db, std::string("SELECT ") + kColumns +
                                             " FROM kernel_metrics WHERE ?1=0 OR pid=?1 ORDER BY id", kIo, false);
  if (!s) return all;
  s->bind(1, pid);
  while (s->step() == SQLITE_ROW) all.push_back(row(*s));
  return all;
}

// The launch's row: a measurement before a failure, the latest of either.
std::optional<KernelMetrics> Store::Impl::launchMetrics(std::uint32_t pid, std::uint32_t correlation) {
  if (!correlation) return std::nullopt;
  auto s = sql::Stmt::prepare(db, std::string("SELECT ") + kColumns +
                                      " FROM kernel_metrics WHERE pid=? AND correlation=? ORDER BY error IS NOT NULL, id DESC LIMIT 1",
                              kIo, false);
  if (!s) return std::nullopt;
  s->bind(1, pid).bind(2, correlation);
  if (s->step() != SQLITE_ROW) return std::nullopt;
  return row(*s);
}

}  // namespace strata::cuda
