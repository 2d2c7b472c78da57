// Tests: the expression evaluator, log messages and dataBreakpointInfo on stopped targets.
#include <doctest.h>

#include "strata/native/symbols/expression.hpp"
#include "test_support.hpp"

using namespace strata::native::symbols;
using namespace strata::native::symbols::test;

namespace {

std::shared_ptr<const FrameContext> frameOf(Stopped& s, const std::string& function) {
  int index = s.frameOf(function);
  REQUIRE(index >= 0);
  auto frames = s.stack->frames(index, 1);
  auto ctx = makeFrameContext(*s.stack, frames[0], s.process->memory());
  REQUIRE(ctx.ok());
  return *ctx;
}

std::string eval(const std::shared_ptr<const FrameContext>& f, const char* text) {
  auto r = evaluateToPresentation(text, f);
  return r ? r->value : "error: " + r.error().message;
}

}  // namespace

TEST_CASE("expressions over a C frame: arithmetic, members, pointers, casts, errors") {
  Stopped s;
  s.run(STRATA_SYM_C, 1);
  auto f = frameOf(s, "add_points");
  CHECK(eval(f, "p->x + 1") == "4");
  CHECK(eval(f, "q.y * scale") == "40");
  CHECK(eval(f, "p->x + q.x == 13") == "true");
  CHECK(eval(f, "sum % 100") == "65");
  CHECK(eval(f, "3 + 4 * 2") == "11");
  CHECK(eval(f, "(3 + 4) * 2") == "14");
  CHECK(eval(f, "(char)65") == "65 'A'");
  CHECK(eval(f, "(unsigned char)300") == "44");
  CHECK(eval(f, "(double)scale / 4") == "0.5");
  CHECK(eval(f, "1.5 * 2") == "3");
  CHECK(eval(f, "-scale") == "-2");
  CHECK(eval(f, "!scale") == "false");
  CHECK(eval(f, "*p") == "{x=3, y=4}");
  CHECK(eval(f, "p[0].y") == "4");
  CHECK(eval(f, "&scale").starts_with("0x7ff"));
  CHECK(eval(f, "*&scale") == "error: cannot apply '*' to void *");
  CHECK(eval(f, "g_array[2] + g_counter") == "45");
  CHECK(eval(f, "g_greeting == \"hello\"") == "true");
  CHECK(eval(f, "g_greeting != \"hello\"") == "false");
  CHECK(eval(f, "p->x > 2 && q.x < 5") == "false");
  CHECK(eval(f, "p->x > 2 || nope") == "true");  // short-circuit: nope is never looked up
  CHECK(eval(f, "'a'") == "97 'a'");
  CHECK(eval(f, "0x10 | 1") == "17");
  CHECK(eval(f, "nope + 1") == "error: no symbol 'nope' in the current scope");
  CHECK(eval(f, "scale->x") == "error: cannot apply '->' to int");
  CHECK(eval(f, "p.x") == "error: cannot apply '.' to struct Point * (use '->')");
  CHECK(eval(f, "q.z") == "error: no member 'z' in const struct Point");
  CHECK(eval(f, "q + 1") == "error: cannot apply '+' to const struct Point");
  CHECK(eval(f, "1 / 0") == "error: division by zero");
  CHECK(eval(f, "(1 + 2") == "error: expected ')' at column 7");
  CHECK(eval(f, "1 + ") == "error: unexpected end of expression");
  CHECK(eval(f, "1 $ 2") == "error: unexpected '$' at column 3");
}

TEST_CASE("conditions parse once and evaluate per hit; log messages interpolate") {
  Stopped s;
  s.run(STRATA_SYM_C, 1);
  auto f = frameOf(s, "add_points");
  auto cond = Expression::parse("p->x + q.x == 13 && scale > 1");
  REQUIRE(cond.ok());
  for (int i = 0; i < 3; ++i) {
    auto r = cond->evaluateCondition(f);
    REQUIRE(r.ok());
    CHECK(*r);
  }
  auto notScalar = Expression::parse("q");
  REQUIRE(notScalar.ok());
  auto r = notScalar->evaluateCondition(f);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "a condition must be a number or a pointer, not const struct Point");
  auto log = LogMessage::parse("sum={sum} x={p->x} {{literal}} bad={nope}");
  REQUIRE(log.ok());
  CHECK(log->render(f) == "sum=1165 x=3 {literal} bad=<error: no symbol 'nope' in the current scope>");
  CHECK_FALSE(LogMessage::parse("x={x").ok());
}

TEST_CASE("dataBreakpointInfo gives the address and size of an lvalue") {
  Stopped s;
  s.run(STRATA_SYM_C, 1);
  auto f = frameOf(s, "add_points");
  auto sum = dataBreakpointInfo("sum", f);
  REQUIRE(sum.ok());
  CHECK(sum->size == 4);
  auto p = lookupVariable(f, "sum");
  REQUIRE(p.ok());
  CHECK(sum->address == p->location.address);
  CHECK(sum->description.starts_with("sum (int, 4 bytes at 0x"));
  auto member = dataBreakpointInfo("p->y", f);
  REQUIRE(member.ok());
  auto pointer = lookupVariable(f, "p");
  REQUIRE(pointer.ok());
  CHECK(member->address == *readPointer(*pointer) + 4);
  auto array = dataBreakpointInfo("g_array", f);
  REQUIRE_FALSE(array.ok());
  CHECK(array.error().message == "'g_array' is 20 bytes; a data breakpoint watches 1, 2, 4 or 8 bytes");
  auto literal = dataBreakpointInfo("scale + 1", f);
  REQUIRE_FALSE(literal.ok());
  CHECK(literal.error().message == "'scale + 1' is not in memory; only values in memory can be watched");
}

TEST_CASE("expressions over C++: containers, smart pointers, references, members of this") {
  Stopped s;
  s.run(STRATA_SYM_CPP, 1);
  auto f = frameOf(s, "main");
  CHECK(eval(f, "v[1] + v[2]") == "5");
  CHECK(eval(f, "v[3]") == "error: index 3 is out of range (size 3)");
  CHECK(eval(f, "*up") == "5");
  CHECK(eval(f, "sp->size()").starts_with("error: "));
  CHECK(eval(f, "r.w_ * r.h_") == "12");
  CHECK(eval(f, "ref.id") == "7");
  CHECK(eval(f, "s == \"hello world\"") == "true");
  CHECK(eval(f, "m") == "{size=2}");
  CHECK(eval(f, "big[99999]") == "7");
  CHECK(eval(f, "m[\"two\"] * 10") == "20");
  CHECK(eval(f, "um[1] == \"a\"") == "true");
  CHECK(eval(f, "m[\"three\"]") == "error: no key \"three\" in std::map<std::string, int>");
}

TEST_CASE("a condition in a deep recursion frame") {
  Stopped s;
  s.run(STRATA_SYM_CPP, 2);
  auto frames = s.stack->frames(0, 1100);
  int found = 0;
  for (const Frame& fr : frames) {
    if (fr.function != "recurse") continue;
    auto ctx = makeFrameContext(*s.stack, fr, s.process->memory());
    REQUIRE(ctx.ok());
    auto cond = Expression::parse("n == 500");
    REQUIRE(cond.ok());
    auto r = cond->evaluateCondition(*ctx);
    REQUIRE(r.ok());
    if (*r) ++found;
  }
  CHECK(found == 1);
}

TEST_CASE("a condition at an int3 in frame 0, without unwinding") {
  auto started = TracedProcess::start(STRATA_SYM_C);
  REQUIRE(started.ok());
  std::unique_ptr<TracedProcess> process(*started);
  SymbolCache cache;
  ModuleMap modules(cache);
  auto objects = loadedObjectsFromProcMaps(process->pid());
  REQUIRE(objects.ok());
  for (const auto& o : *objects) REQUIRE(modules.add(o).ok());
  const Module* exe = nullptr;
  for (const Module& m : modules.modules())
    if (m.name() == "strata_sym_c") exe = &m;
  REQUIRE(exe != nullptr);
  auto fns = exe->symbols->functionsNamed("square");
  REQUIRE(fns.ok());
  std::uint64_t at = exe->symbols->afterPrologue(fns->front()) + exe->object.loadBias;
  auto original = process->insertBreakpoint(at);
  REQUIRE(original.ok());
  REQUIRE(process->continueToTrap().ok());
  auto regs = process->registers();
  REQUIRE(regs.ok());
  CHECK(regs->gpr.rip == at + 1);
  regs->gpr.rip = at;
  REQUIRE(process->setRegisters(*regs).ok());
  REQUIRE(process->removeBreakpoint(at, *original).ok());
  auto ctx = makeTopFrameContext(modules, *regs, process->memory());
  REQUIRE_MESSAGE(ctx.ok(), (ctx.ok() ? "" : ctx.error().message));
  CHECK((*ctx)->cfa.has_value());
  auto cond = Expression::parse("v == 24");
  REQUIRE(cond.ok());
  auto r = cond->evaluateCondition(*ctx);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  CHECK(*r);
  CHECK(eval(*ctx, "v * 2") == "48");
  CHECK(eval(*ctx, "g_counter") == "42");
}

TEST_CASE("inside a method, members of this are names of their own") {
  Stopped s;
  s.run(STRATA_SYM_CPP, 3);
  auto f = frameOf(s, "shapes::Rect::scaled");
  auto locals = localsOf(f);
  REQUIRE(locals.ok());
  REQUIRE(locals->size() == 2);
  CHECK((*locals)[0].name == "this");
  CHECK((*locals)[1].name == "k");
  CHECK(present((*locals)[0]).type == "const shapes::Rect * const");
  CHECK(eval(f, "w_ * k") == "15");
  CHECK(eval(f, "this->h_") == "4");
  CHECK(eval(f, "id") == "7");  // a member of the base class
  auto w = lookupVariable(f, "w_");
  REQUIRE(w.ok());
  CHECK(w->expression == "this->w_");
}
