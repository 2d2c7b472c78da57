// Tests: unwinding stopped targets and symbolizing frames (module+offset, lines, inlined calls).
#include <doctest.h>

#include "test_support.hpp"

using namespace strata::native::symbols;
using namespace strata::native::symbols::test;

TEST_CASE("stack at a raise() in add_points") {
  Stopped s;
  s.run(STRATA_SYM_C);
  auto frames = s.stack->frames(0, 20);
  REQUIRE(frames.size() >= 3);
  CHECK(frames[0].moduleName == "libc.so.6");
  int add = s.frameOf("add_points");
  REQUIRE(add > 0);
  REQUIRE(frames[add].location);
  CHECK(frames[add].location->line == markerLine(STRATA_SYM_C_SRC, "@bp:add"));
  REQUIRE(frames[add + 1].function == "main");
  CHECK(frames[add + 1].location->line == markerLine(STRATA_SYM_C_SRC, "@bp:main") - 1);
  CHECK(s.stack->raw(frames[add].physicalIndex).cfaKnown);
}

TEST_CASE("1000-deep recursion pages cheaply with the right lines") {
  Stopped s;
  s.run(STRATA_SYM_CPP, 2);
  CHECK(s.stack->physicalCount() > 1000);
  std::size_t total = s.stack->totalFrames();
  CHECK(total == s.stack->physicalCount());
  int deep = s.frameOf("recurse");
  REQUIRE(deep >= 0);
  auto first = s.stack->frames(deep, 1);
  CHECK(first[0].location->line == markerLine(STRATA_SYM_CPP_SRC, "@bp:deep"));
  auto page = s.stack->frames(deep + 500, 20);
  REQUIRE(page.size() == 20);
  for (const Frame& f : page) {
    CHECK(f.function == "recurse");
    CHECK(f.location->line == markerLine(STRATA_SYM_CPP_SRC, "@bp:deep") + 3);
  }
  auto last = s.stack->frames(deep + 1001, 1);
  REQUIRE(last.size() == 1);
  CHECK(last[0].function == "main");
}

TEST_CASE("an inlined call is a frame of its own at -O2") {
  Stopped s;
  s.run(STRATA_SYM_OPT);
  int inl = s.frameOf("stop_inside");
  REQUIRE(inl >= 0);
  auto frames = s.stack->frames(inl, 2);
  CHECK(frames[0].inlined);
  CHECK(frames[0].location->line == markerLine(STRATA_SYM_OPT_SRC, "@bp:inlined"));
  CHECK(frames[1].function == "work");
  CHECK_FALSE(frames[1].inlined);
  CHECK(frames[1].physicalIndex == frames[0].physicalIndex);
  REQUIRE(frames[1].location);
  CHECK(frames[1].location->line == markerLine(STRATA_SYM_OPT_SRC, "r += stop_inside(r);"));
}

TEST_CASE("frames without debug info show module!symbol+offset") {
  Stopped s;
  s.run(STRATA_SYM_C, 3);
  int cb = s.frameOf("trap_cb");
  REQUIRE(cb >= 0);
  auto frames = s.stack->frames(cb, 3);
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].location->line == markerLine(STRATA_SYM_C_SRC, "@bp:cb"));
  CHECK_FALSE(frames[1].hasDebugInfo);
  CHECK(frames[1].function.find("libstrata_sym_nodebug.so!nodebug_call+0x") == 0);
  CHECK_FALSE(frames[1].location);
  CHECK(frames[2].function == "main");
}
