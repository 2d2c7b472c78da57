// Launch sites in a native program: one site per launching call site, the full stack taken
// once, frames resolved to their module and symbol.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "dump_report.hpp"
#include "launch_sites.hpp"

using namespace strata::cuda::collector;

// Exported (the test binary is linked with -rdynamic) so dladdr can name them.
extern "C" __attribute__((noinline)) SiteTable::Lookup strata_test_launch_a(SiteTable& t, CapturedSite& c) {
  auto r = t.lookup(211, 2, "cudaLaunchKernel", c);  // @site:a
  asm volatile("" ::: "memory");  // not a tail call: this frame stays on the stack
  return r;
}
extern "C" __attribute__((noinline)) SiteTable::Lookup strata_test_launch_b(SiteTable& t, CapturedSite& c) {
  auto r = t.lookup(211, 2, "cudaLaunchKernel", c);
  asm volatile("" ::: "memory");
  return r;
}

TEST_CASE("the same call site is one site; another call site is another") {
  PythonFrames python;
  NativeStack native;
  native.skipModules({"libcupti.so"}, nullptr);
  SiteTable table(python, native, 1 << 8);
  CapturedSite c1, c2, c3;
  std::vector<SiteTable::Lookup> a;
  volatile int times = 3;  // a loop the optimizer cannot peel into three call sites
  for (int i = 0; i < times; ++i) a.push_back(strata_test_launch_a(table, i == 0 ? c1 : c2));
  CHECK(a[0].fresh);
  CHECK(a[0].site == 1);
  CHECK_FALSE(a[1].fresh);
  CHECK(a[1].site == 1);
  CHECK(a[2].site == 1);
  auto b = strata_test_launch_b(table, c3);
  CHECK(b.fresh);
  CHECK(b.site == 2);
  CHECK(table.count() == 2);

  // This binary has no Python: the key and the frames are native.
  CHECK_FALSE(python.available());
  CHECK(c1.python.empty());
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
  SiteTable table(python, native, 1 << 8);
  std::vector<std::thread> threads;
  std::vector<std::uint32_t> ids(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      CapturedSite c;
      for (int i = 0; i < 1000; ++i) ids[t] = strata_test_launch_a(table, c).site;
    });
  for (auto& t : threads) t.join();
  // Each thread's stack below the launching function differs (thread start), so sites differ
  // per thread, but every id is stable and no key was captured twice.
  CHECK(table.count() <= 8);
  for (auto id : ids) CHECK(id != 0);
  CHECK(table.overflowed() == 0);
}

TEST_CASE("a full site table says so instead of growing") {
  PythonFrames python;
  NativeStack native;
  SiteTable table(python, native, 1);  // one slot
  CapturedSite c;
  CHECK(strata_test_launch_a(table, c).site == 1);
  auto b = strata_test_launch_b(table, c);
  CHECK(b.site == 0);
  CHECK_FALSE(b.fresh);
  CHECK(table.overflowed() == 1);
}

TEST_CASE("a site's native frames lead back to the source line of the launch") {
  PythonFrames python;
  NativeStack native;
  SiteTable table(python, native, 1 << 8);
  CapturedSite c;
  REQUIRE(strata_test_launch_a(table, c).fresh);
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
