// Tests: locals, globals, registers, types, libstdc++ views and setVariable on stopped targets.
#include <doctest.h>

#include <map>

#include "strata/native/symbols/values.hpp"
#include "test_support.hpp"

using namespace strata::native::symbols;
using namespace strata::native::symbols::test;

namespace {

struct FrameVars {
  std::shared_ptr<const FrameContext> frame;
  std::map<std::string, Value> byName;
  std::vector<std::string> order;
};

FrameVars varsOf(Stopped& s, const std::string& function) {
  int index = s.frameOf(function);
  REQUIRE(index >= 0);
  auto frames = s.stack->frames(index, 1);
  auto ctx = makeFrameContext(*s.stack, frames[0], s.process->memory());
  REQUIRE(ctx.ok());
  FrameVars out;
  out.frame = *ctx;
  auto locals = localsOf(*ctx);
  REQUIRE(locals.ok());
  for (auto& v : *locals) {
    out.order.push_back(v.name);
    out.byName[v.name] = v;
  }
  return out;
}

std::string show(const Value& v) { return present(v).value; }

// "[0]=1 [1]=2" for the first `count` children.
std::string kids(const Value& v, ChildFilter filter = ChildFilter::All, std::uint64_t start = 0, std::uint64_t count = 20) {
  auto c = children(v, filter, start, count);
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error().message));
  std::string out;
  for (auto& k : *c) out += (out.empty() ? "" : " ") + k.name + "=" + show(k);
  return out;
}

Value child(const Value& v, const std::string& name) {
  auto c = children(v, ChildFilter::All, 0, 100);
  REQUIRE(c.ok());
  for (auto& k : *c)
    if (k.name == name) return k;
  FAIL("no child " << name);
  return v;
}

}  // namespace

TEST_CASE("C locals: structs, typedefs, bitfields, enums, arrays, pointers, strings") {
  Stopped s;
  s.run(STRATA_SYM_C, 2);
  auto vars = varsOf(s, "main");
  auto& v = vars.byName;
  CHECK(show(v["pt"]) == "{x=3, y=4}");
  CHECK(present(v["pt"]).type == "struct Point");
  CHECK(present(v["other"]).type == "PointT");
  CHECK(show(v["other"]) == "{x=10, y=20}");
  CHECK(show(v["flags"]) == "{a=5, b=17, c=-3}");
  CHECK(show(child(v["num"], "i")) == "1065353216");
  CHECK(show(child(v["num"], "f")) == "1");
  CHECK(show(v["color"]) == "GREEN");
  CHECK(present(v["color"]).type == "enum Color");
  CHECK(show(v["numbers"]) == "{7, 8, 9, 10}");
  CHECK(present(v["numbers"]).indexedChildren == 4);
  CHECK(kids(v["numbers"], ChildFilter::Indexed, 1, 2) == "[1]=8 [2]=9");
  CHECK(kids(v["ptr"]) == "*ptr=9");
  CHECK(show(v["ptr"]).starts_with("0x7ff"));
  CHECK(show(v["name"]) == "\"strata\"");
  CHECK(show(v["text"]).ends_with(" \"quote\\\"d\""));
  CHECK(present(v["text"]).type == "const char *");
  CHECK(show(v["big"]) == "1234567890123");
  CHECK(present(v["big"]).type == "const volatile long int");
  CHECK(show(v["ratio"]) == "0.5");
  CHECK(show(v["total"]) == "1165");
  // A pointer to a struct expands to the struct's members.
  Value next = child(v["n1"], "next");
  CHECK(kids(next) == "value=2 next=0x0");
  CHECK(child(next, "value").expression == "n1.next->value");
  CHECK(present(v["pt"]).memoryReference.has_value());
  CHECK(show(v["ring"]).starts_with("{value=7, next=0x7ff"));
  CHECK(kids(child(child(v["ring"], "next"), "next")).starts_with("value=7 next=0x7ff"));
  CHECK(show(v["pts"]) == "{{...}, {...}}");
  CHECK(kids(v["pts"]) == "[0]={x=1, y=2} [1]={x=5, y=6}");
  CHECK(child(v["pts"], "[1]").expression == "pts[1]");
  CHECK(show(v["num"]) == "{i=1065353216, f=1, bytes={...}}");
  CHECK(show(child(v["num"], "bytes")) == "\"\\x00\\x00\\x80?\"");
}

TEST_CASE("parameters come first; globals of the CU; registers") {
  Stopped s;
  s.run(STRATA_SYM_C, 1);
  auto vars = varsOf(s, "add_points");
  REQUIRE(vars.order.size() == 4);
  CHECK(vars.order[0] == "p");
  CHECK(vars.order[1] == "q");
  CHECK(vars.order[2] == "scale");
  CHECK(vars.order[3] == "sum");
  CHECK(kids(vars.byName["p"]) == "x=3 y=4");
  CHECK(show(vars.byName["q"]) == "{x=10, y=20}");
  CHECK(show(vars.byName["sum"]) == "1165");
  auto globals = globalsOf(vars.frame);
  REQUIRE(globals.ok());
  std::map<std::string, std::string> g;
  for (auto& x : *globals) g[x.name] = show(x);
  CHECK(g["g_counter"] == "42");
  CHECK(g["g_greeting"].ends_with(" \"hello\""));
  CHECK(g["g_ratio"] == "2.5");
  CHECK(g["g_array"] == "{1, 2, 3, 4, 5}");
  CHECK(g["g_origin"] == "{x=0, y=0}");
  auto regs = registersOf(*vars.frame);
  REQUIRE(regs.size() == 17);
  CHECK(regs.back().first == "rip");
  CHECK(regs.back().second.starts_with("0x"));
  auto thread = s.process->registers();
  REQUIRE(thread.ok());
  auto all = registersOf(*thread);
  REQUIRE(all.size() == 26 + 17);
  CHECK(all[17].first == "eflags");
  CHECK(all.back().first == "mxcsr");
  auto missing = lookupVariable(vars.frame, "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "no symbol 'nope' in the current scope");
  auto global = lookupVariable(vars.frame, "g_counter");
  REQUIRE(global.ok());
  CHECK(show(*global) == "42");
}

TEST_CASE("setVariable writes scalars, enums, floats, bitfields and pointers") {
  Stopped s;
  s.run(STRATA_SYM_C, 2);
  auto vars = varsOf(s, "main");
  auto& v = vars.byName;
  auto r = setValue(child(v["pt"], "x"), "99");
  REQUIRE(r.ok());
  CHECK(r->value == "99");
  CHECK(show(v["pt"]) == "{x=99, y=4}");
  REQUIRE(setValue(v["color"], "BLUE").ok());
  CHECK(show(v["color"]) == "BLUE");
  REQUIRE(setValue(v["ratio"], "1.25").ok());
  CHECK(show(v["ratio"]) == "1.25");
  REQUIRE(setValue(child(v["flags"], "b"), "3").ok());
  CHECK(show(v["flags"]) == "{a=5, b=3, c=-3}");
  REQUIRE(setValue(v["ptr"], "0").ok());
  CHECK(show(v["ptr"]) == "0x0");
  auto bad = setValue(v["total"], "12abc");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "'12abc' is not an integer");
  auto aggregate = setValue(v["pt"], "1");
  REQUIRE_FALSE(aggregate.ok());
  CHECK(aggregate.error().message == "only scalars and pointers can be set; 'pt' is struct Point");
}

TEST_CASE("C++: classes with bases, references, libstdc++ containers and smart pointers") {
  Stopped s;
  s.run(STRATA_SYM_CPP, 1);
  auto vars = varsOf(s, "main");
  auto& v = vars.byName;
  CHECK(show(v["v"]) == "{size=3}");
  CHECK(present(v["v"]).type == "std::vector<int>");
  CHECK(present(v["s"]).type == "std::string");
  CHECK(present(v["m"]).type == "std::map<std::string, int>");
  CHECK(present(v["um"]).type == "std::unordered_map<int, std::string>");
  CHECK(present(v["up"]).type == "std::unique_ptr<int>");
  CHECK(present(v["sp"]).type == "std::shared_ptr<std::string>");
  CHECK(kids(v["v"]) == "[raw]={std::_Vector_base<int, std::allocator<int> >={...}} [0]=1 [1]=2 [2]=3");
  CHECK(kids(v["v"], ChildFilter::Indexed, 0, 2) == "[0]=1 [1]=2");
  CHECK(show(v["s"]) == "\"hello world\"");
  CHECK(show(v["m"]) == "{size=2}");
  CHECK(kids(v["m"], ChildFilter::Indexed) == "[\"one\"]=1 [\"two\"]=2");
  CHECK(show(v["um"]) == "{size=1}");
  CHECK(kids(v["um"], ChildFilter::Indexed) == "[1]=\"a\"");
  CHECK(kids(v["up"], ChildFilter::Named) == "[value]=5 [raw]={_M_t={...}}");
  CHECK(show(v["sp"]).ends_with(" (use_count=1)"));
  CHECK(show(child(v["sp"], "[value]")) == "\"shared\"");
  CHECK(show(v["opt"]) == "9");
  CHECK(show(v["none"]) == "nullopt");
  CHECK(present(v["r"]).type == "shapes::Rect");
  CHECK(kids(v["r"]) == "shapes::Base={id=7} w_=3 h_=4");
  CHECK(present(v["ref"]).type == "shapes::Base &");
  CHECK(show(v["ref"]) == "{id=7}");
  Presentation big = present(v["big"]);
  CHECK(big.value == "{size=100000}");
  CHECK(big.indexedChildren == 100000);
  CHECK(kids(v["big"], ChildFilter::Indexed, 99998, 10) == "[99998]=7 [99999]=7");
  CHECK(show(v["tw"]) == "45");
  CHECK(show(v["in"]) == "42");
}

TEST_CASE("-O2: values the compiler dropped say so") {
  Stopped s;
  s.run(STRATA_SYM_OPT, 1);
  auto vars = varsOf(s, "work");
  std::string all;
  for (auto& name : vars.order) all += name + "=" + show(vars.byName[name]) + " ";
  CHECK(all == "n=<optimized out> scaled=<optimized out> r=16 ");
  Value r = vars.byName["r"];
  REQUIRE(r.location.kind == ValueLocation::Kind::Register);
  auto set = setValue(r, "3");
  REQUIRE_FALSE(set.ok());
  CHECK(set.error().message == "'r' lives in a register of a caller frame; it can only be set in the innermost frame");
  auto dropped = setValue(vars.byName["n"], "3");
  REQUIRE_FALSE(dropped.ok());
  CHECK(dropped.error().message == "'n' is optimized out");
}
