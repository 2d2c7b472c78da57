// Launch sites in a native program: one site per launching call site, the full stack taken
// once (raw, in a slot taken in advance), frames named later to their module and symbol.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "dump_report.hpp"
#include "launch_sites.hpp"

using namespace strata::cuda::collector;
using strata::cuda::SiteAttribution;

// Exported (the test binary is linked with -rdynamic) so dladdr can name them.
extern "C" __attribute__((noinline)) SiteTable::Lookup strata_test_launch_a(SiteTable& t) {
  auto r = t.lookup(211, 2, "cudaLaunchKernel");  // @site:a
  asm volatile("" ::: "memory");  // not a tail call: this frame stays on the stack
  return r;
}
extern "C" __attribute__((noinline)) SiteTable::Lookup strata_test_launch_b(SiteTable& t) {
  auto r = t.lookup(211, 2, "cudaLaunchKernel");
  asm volatile("" ::: "memory");
  return r;
}

namespace {

// The new sites waiting in the table, named as the collector names them off the launch path.
std::vector<CapturedSite> named(SiteTable& table, PythonFrames& python) {
  std::vector<RawSite*> raw;
  table.takePending(raw);
  std::vector<CapturedSite> out;
  for (const RawSite* r : raw) out.push_back(nameSite(*r, python));
  table.release(raw);
  return out;
}

}  // namespace

TEST_CASE("the same call site is one site; another call site is another") {
  PythonFrames python;
  NativeStack native;
  Scopes scopes;
  native.skipModules({"libcupti.so"}, nullptr);
  SiteTable table(python, native, scopes, 1 << 8);
  std::vector<SiteTable::Lookup> a;
  volatile int times = 3;  // a loop the optimizer cannot peel into three call sites
  for (int i = 0; i < times; ++i) a.push_back(strata_test_launch_a(table));
  CHECK(a[0].fresh);
  CHECK(a[0].site == 1);
  CHECK_FALSE(a[1].fresh);
  CHECK(a[1].site == 1);
  CHECK(a[2].site == 1);
  auto b = strata_test_launch_b(table);
  CHECK(b.fresh);
  CHECK(b.site == 2);
  CHECK(table.count() == 2);
  CHECK(table.pendingCount() == 2);
  auto sites = named(table, python);
  REQUIRE(sites.size() == 2);
  CHECK(table.pendingCount() == 0);
  const CapturedSite& c1 = sites[0];
  const CapturedSite& c3 = sites[1];

  // This binary has no Python: the key and the frames are native.
  CHECK_FALSE(python.available());
  CHECK(python.describe() == "no CPython in this process (no _PyRuntime symbol)");
  CHECK(c1.python.empty());
  CHECK(c1.attribution == SiteAttribution::None);
  CHECK(c1.id == 1);
  CHECK(c1.api == "cudaLaunchKernel");
  CHECK(c1.cbid == 211);
  REQUIRE_FALSE(c1.native.empty());
  // The innermost frame kept is the launching function, found by dladdr in this executable.
  CHECK(c1.native[0].symbol == "strata_test_launch_a");
  CHECK(c3.native[0].symbol == "strata_test_launch_b");
  CHECK(c1.native[0].module.find("strata_gpu_ring_tests") != std::string::npos);
  CHECK(c1.native[0].elfAddress != 0);
  CHECK(c1.native[0].elfAddress <= c1.native[0].pc);
  // libunwind is installed here (libunwind-dev); glibc's backtrace is only the fallback.
  CHECK(std::string(native.unwinder()) == "libunwind");
  MESSAGE(c1.native.size() << " native frames");
}

TEST_CASE("launch keys from many threads at once land on consistent ids") {
  PythonFrames python;
  NativeStack native;
  Scopes scopes;
  SiteTable table(python, native, scopes, 1 << 8);
  std::vector<std::thread> threads;
  std::vector<std::uint32_t> ids(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) ids[t] = strata_test_launch_a(table).site;
    });
  for (auto& t : threads) t.join();
  // Each thread's stack below the launching function differs (thread start), so sites differ
  // per thread, but every id is stable and no key was captured twice.
  CHECK(table.count() <= 8);
  for (auto id : ids) CHECK(id != 0);
  CHECK(table.overflowed() == 0);
  CHECK(table.pendingCount() == table.count());
}

TEST_CASE("a full site table says so instead of growing") {
  PythonFrames python;
  NativeStack native;
  Scopes scopes;
  SiteTable table(python, native, scopes, 1);  // one slot
  CHECK(strata_test_launch_a(table).site == 1);
  auto b = strata_test_launch_b(table);
  CHECK(b.site == 0);
  CHECK_FALSE(b.fresh);
  CHECK(table.overflowed() == 1);
}

TEST_CASE("new sites wait in slots taken in advance; with none free the launch is told to drain") {
  PythonFrames python;
  NativeStack native;
  Scopes scopes;
  SiteTable table(python, native, scopes, 1 << 8, 1);  // one pending slot
  auto a = strata_test_launch_a(table);
  CHECK(a.fresh);
  auto b = strata_test_launch_b(table);
  CHECK(b.noSlot);
  CHECK(b.site == 0);
  CHECK_FALSE(b.fresh);
  CHECK(named(table, python).size() == 1);  // what the collector's drain does
  auto again = strata_test_launch_b(table);
  CHECK(again.fresh);
  CHECK(again.site == 2);
  CHECK(table.overflowed() == 0);
}

TEST_CASE("a site's native frames lead back to the source line of the launch") {
  PythonFrames python;
  NativeStack native;
  Scopes scopes;
  SiteTable table(python, native, scopes, 1 << 8);
  REQUIRE(strata_test_launch_a(table).fresh);
  auto sites = named(table, python);
  REQUIRE(sites.size() == 1);
  const CapturedSite& c = sites[0];
  REQUIRE_FALSE(c.native.empty());
  // What the dump (and the adapter) do with a frame: module + ELF address -> DWARF line.
  strata::cuda::dump::LineResolver lines;
  auto where = lines.resolve(c.native[0].module, c.native[0].elfAddress);
  CHECK(where.function == "strata_test_launch_a");
  CHECK(where.file.ends_with("launch_sites_test.cpp"));
  int marked = 0, n = 0;
  if (std::FILE* f = std::fopen(STRATA_LAUNCH_SITES_SOURCE, "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      ++n;
      if (std::strstr(line, "// @site:a") && !std::strstr(line, "strstr")) marked = n;
    }
    std::fclose(f);
  }
  CHECK(marked > 0);
  CHECK(where.line == marked);
}
