// Tests: line tables and function lookup on the -g -O0 targets and on libc (no debug info).
#include <doctest.h>

#include "strata/native/symbols/object_symbols.hpp"
#include "traced_process.hpp"

using namespace strata::native::symbols;
using strata::native::symbols::test::markerLine;

namespace {
std::shared_ptr<ObjectSymbols> openOrFail(const char* path) {
  auto o = ObjectSymbols::open(path);
  REQUIRE_MESSAGE(o.ok(), (o.ok() ? "" : o.error().message));
  return *o;
}
}  // namespace

TEST_CASE("function entry and the line after its prologue") {
  auto obj = openOrFail(STRATA_SYM_C);
  auto fns = obj->functionsNamed("add_points");
  REQUIRE(fns.ok());
  REQUIRE(fns->size() == 1);
  const FunctionInfo& f = fns->front();
  CHECK(f.name == "add_points");
  CHECK(f.hasDebugInfo);
  CHECK(f.low == f.entry);
  auto atEntry = obj->locationForAddress(f.entry);
  REQUIRE(atEntry);
  CHECK(atEntry->line == markerLine(STRATA_SYM_C_SRC, "@line:add_body") - 1);
  auto body = obj->locationForAddress(obj->afterPrologue(f));
  REQUIRE(body);
  CHECK(body->line == markerLine(STRATA_SYM_C_SRC, "@line:add_body"));
  CHECK(body->file.ends_with("sym_c.c"));
  auto at = obj->functionAt(f.entry + 5);
  REQUIRE(at);
  CHECK(at->name == "add_points");
}

TEST_CASE("file:line gives one address per function and moves to the next line with code") {
  auto obj = openOrFail(STRATA_SYM_C);
  int loop = markerLine(STRATA_SYM_C_SRC, "@line:loop");
  auto exact = obj->addressesForLine("sym_c.c", loop);
  REQUIRE(exact.ok());
  CHECK(exact->line == loop);
  CHECK(exact->addresses.size() == 1);  // the for line has several blocks, one stop
  auto moved = obj->addressesForLine("sym_c.c", loop - 1);  // a blank line
  REQUIRE(moved.ok());
  CHECK(moved->requestedLine == loop - 1);
  CHECK(moved->line == loop);
  CHECK(moved->addresses == exact->addresses);
  auto missing = obj->addressesForLine("nothere.c", 3);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("no code at or after line 3 of nothere.c") != std::string::npos);

  auto range = obj->lineRange(exact->addresses.front());
  REQUIRE(range);
  CHECK(range->location.line == loop);
  CHECK(range->low <= exact->addresses.front());
  CHECK(range->high > exact->addresses.front());
  auto after = obj->locationForAddress(range->high);
  REQUIRE(after);
  CHECK(after->line != loop);
}

TEST_CASE("C++ functions by plain, qualified and demangled names; template instances") {
  auto obj = openOrFail(STRATA_SYM_CPP);
  auto qualified = obj->functionsNamed("shapes::Rect::area");
  REQUIRE(qualified.ok());
  REQUIRE(qualified->size() == 1);
  CHECK(qualified->front().name == "shapes::Rect::area");
  CHECK(qualified->front().displayName == "shapes::Rect::area() const");
  auto partial = obj->functionsNamed("Rect::area");
  REQUIRE(partial.ok());
  CHECK(partial->size() == 1);
  auto plain = obj->functionsNamed("area");  // Base::area and Rect::area
  REQUIRE(plain.ok());
  CHECK(plain->size() == 2);
  auto withParams = obj->functionsNamed("shapes::Rect::width() const");
  REQUIRE(withParams.ok());
  CHECK(withParams->size() == 1);
  auto templ = obj->functionsNamed("twice");
  REQUIRE(templ.ok());
  CHECK(templ->size() == 2);
  auto one = obj->functionsNamed("twice<int>");
  REQUIRE(one.ok());
  REQUIRE(one->size() == 1);
  CHECK(one->front().name == "twice<int>");
  auto lines = obj->addressesForLine("sym_cpp.cpp", markerLine(STRATA_SYM_CPP_SRC, "@line:twice"));
  REQUIRE(lines.ok());
  CHECK(lines->addresses.size() == 2);  // one per template instance
  auto inl = obj->functionsNamed("inc");
  REQUIRE(inl.ok());
  CHECK(inl->front().name == "inc");
  auto none = obj->functionsNamed("no_such_function");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("no function named 'no_such_function'") == 0);
}

TEST_CASE("symbols without debug info come from the ELF symbol table") {
  auto obj = openOrFail(STRATA_SYM_NODEBUG);
  CHECK_FALSE(obj->hasDebugInfo());
  auto raise = obj->functionsNamed("nodebug_call");
  REQUIRE(raise.ok());
  CHECK_FALSE(raise->front().hasDebugInfo);
  auto at = obj->functionAt(raise->front().entry + 1);
  REQUIRE(at);
  CHECK(at->entry == raise->front().entry);
  CHECK(at->name == "nodebug_call");
  CHECK_FALSE(obj->addressesForLine("nodebug.c", 3).ok());
}

TEST_CASE("the cache shares one index per file") {
  SymbolCache cache;
  auto a = cache.get(STRATA_SYM_C);
  auto b = cache.get(STRATA_SYM_C);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->get() == b->get());
  CHECK_FALSE((*a)->buildId().empty());
  CHECK_FALSE(cache.get("/nonexistent/lib.so").ok());
}

TEST_CASE("-O2: a function that exists only as inlined copies is found by name") {
  auto obj = openOrFail(STRATA_SYM_OPT);
  CHECK_FALSE(obj->elfSymbolNamed("stop_inside"));
  auto fns = obj->functionsNamed("stop_inside");
  REQUIRE_MESSAGE(fns.ok(), (fns.ok() ? "" : fns.error().message));
  REQUIRE(fns->size() == 1);
  CHECK(fns->front().inlinedCopy);
  auto work = obj->functionsNamed("work");
  REQUIRE(work.ok());
  CHECK(fns->front().entry >= work->front().low);
  CHECK(fns->front().entry < work->front().high);
  auto line = obj->addressesForLine("sym_opt.c", markerLine(STRATA_SYM_OPT_SRC, "@bp:inlined"));
  REQUIRE(line.ok());
  CHECK(line->addresses.size() == 1);
  auto scopes = obj->scopesAt(line->addresses.front());
  REQUIRE(scopes.size() >= 2);
  CHECK(qualifiedFunctionName(&scopes.front()) == "stop_inside");
  CHECK(qualifiedFunctionName(&scopes.back()) == "work");
}

TEST_CASE("absolute source paths match; partial directory names do not") {
  auto obj = openOrFail(STRATA_SYM_C);
  int loop = markerLine(STRATA_SYM_C_SRC, "@line:loop");
  auto absolute = obj->addressesForLine(STRATA_SYM_C_SRC, loop);
  REQUIRE(absolute.ok());
  CHECK(absolute->line == loop);
  CHECK(obj->addressesForLine("symbols/sym_c.c", loop).ok());
  CHECK_FALSE(obj->addressesForLine("ym_c.c", loop).ok());
}

TEST_CASE("a header line has an address in every CU that holds a copy") {
  auto obj = openOrFail(STRATA_SYM_MULTI);
  int line = markerLine(STRATA_SYM_MULTI_H, "@line:shared");
  auto lines = obj->addressesForLine("multi_shared.h", line);
  REQUIRE(lines.ok());
  CHECK(lines->line == line);
  CHECK(lines->addresses.size() == 2);
  auto fns = obj->functionsNamed("shared_add");
  REQUIRE(fns.ok());
  CHECK(fns->size() == 2);
  CHECK(obj->parsedCuLineTables() == 2);
}
