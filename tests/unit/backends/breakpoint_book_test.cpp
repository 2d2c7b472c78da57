// The breakpoint book: sets kept as the client last sent them, replayed into a backend that
// becomes ready, and the ids that backend gives mapped back to the ones the client holds.
#include <doctest/doctest.h>

#include "backends/breakpoint_book.hpp"

using namespace strata;
using namespace strata::backends;
using Set = BreakpointBook::Set;

namespace {

// A backend that places every source breakpoint one line lower under ids from 1, answers
// functions with a refusal, and keeps the answers of `held` paths for the test to give.
class Target final : public Backend {
 public:
  std::string name() const override { return "target"; }
  void launch(const LaunchSpec&, Reply<void> reply) override { reply({}); }
  void configurationDone(Reply<void> reply) override { reply({}); }
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override {
    if (set.kind == BreakpointSet::Kind::Function) {
      sent.push_back("functions");
      return reply(Error{errors::kUnsupportedRequest, "no functions here", false});
    }
    const auto& path = set.path;
    const auto& bps = set.sources;
    sent.push_back(path + ":" + std::to_string(bps.size()));
    std::vector<BreakpointReport> out;
    for (const auto& b : bps) {
      BreakpointReport r;
      r.verified = true;
      r.line = b.line + 1;
      r.id = next++;
      out.push_back(r);
    }
    if (path == held) return later.push_back([reply, out] { reply(out); });
    reply(std::move(out));
  }
  void threads(Reply<std::vector<ThreadInfo>> reply) override { reply(std::vector<ThreadInfo>{}); }
  void terminate(bool, Reply<void> reply) override { reply({}); }
  void detach(Reply<void> reply) override { reply({}); }
  std::vector<std::string> sent;
  std::string held;
  std::vector<std::function<void()>> later;
  std::int64_t next = 1;
};

SourceBreakpointSpec at(std::int64_t line) {
  SourceBreakpointSpec s;
  s.line = line;
  return s;
}

}  // namespace

TEST_CASE("a kept set answers pending under the book's ids; a new set of the same kind replaces it") {
  BreakpointBook book(100);
  auto a = book.keep(Set::source("/a.py", {at(3), at(9)}));
  CHECK(a->ids == std::vector<std::int64_t>{100, 101});
  auto held = BreakpointBook::held(*a, "waits for the agent");
  REQUIRE(held.size() == 2);
  CHECK(held[0].id == 100);
  CHECK(held[0].pending);
  CHECK(!held[0].verified);
  CHECK(held[1].line == 9);
  CHECK(held[1].message == "waits for the agent");
  auto filters = BreakpointBook::held(*book.keep(Set::exception({ExceptionFilterSpec{"raised", {}}})), "x");
  CHECK(filters[0].verified);
  CHECK(!filters[0].id);  // a filter has no id the client follows
  auto again = book.keep(Set::source("/a.py", {at(4)}));
  CHECK(!book.current(a));
  CHECK(book.current(again));
  CHECK(again->ids == std::vector<std::int64_t>{103});  // never an id given before
  CHECK(book.sets().size() == 2);
  auto where = book.where(103);
  REQUIRE(where);
  CHECK(where->first == again);
  CHECK(!book.where(100));
}

TEST_CASE("replay sends every set; the target's ids map back; a refusal is the reason on each") {
  BreakpointBook book;
  auto a = book.keep(Set::source("/a.c", {at(3), at(9)}));
  auto f = book.keep(Set::function({FunctionBreakpointSpec{"main", {}, {}}}));
  Target t;
  std::map<std::string, std::vector<BreakpointReport>> got;
  bool all = false;
  book.replay(t, [&](const BreakpointBook::SetPtr& set, Result<std::vector<BreakpointReport>> r) {
    got[set->key()] = BreakpointBook::orReasons(*set, std::move(r));
  }, [&] { all = true; });
  CHECK(all);
  CHECK(t.sent == std::vector<std::string>{"functions", "/a.c:2"});  // in the order of their keys
  REQUIRE(got["source:/a.c"].size() == 2);
  CHECK(got["source:/a.c"][1].line == 10);
  CHECK(got["source:/a.c"][1].id == 2);  // the target's own id
  CHECK(book.ours(&t, 2) == a->ids[1]);
  CHECK(!book.ours(&t, 7));
  CHECK(!book.ours(nullptr, 2));  // another backend's 2 is another breakpoint
  REQUIRE(got["function"].size() == 1);
  CHECK(got["function"][0].message == "no functions here");
  CHECK(!got["function"][0].verified);
  (void)f;
  book.moved(&t, 2, 40);  // the target placed it anew under another id
  CHECK(book.ours(&t, 40) == a->ids[1]);
  book.forget(&t);
  CHECK(!book.ours(&t, 40));
}

TEST_CASE("an answer for a set replaced meanwhile teaches no ids") {
  BreakpointBook book;
  Target t;
  t.held = "/a.c";
  auto first = book.keep(Set::source("/a.c", {at(3)}));
  int answers = 0;
  book.place(t, first, [&](Result<std::vector<BreakpointReport>>) { ++answers; });
  auto second = book.keep(Set::source("/a.c", {at(5)}));
  REQUIRE(t.later.size() == 1);
  t.later[0]();
  CHECK(answers == 1);
  CHECK(!book.ours(&t, 1));  // the stale answer's id names nothing
  t.held.clear();
  book.place(t, second, [&](Result<std::vector<BreakpointReport>>) { ++answers; });
  CHECK(book.ours(&t, 2) == second->ids[0]);
  // Sent empty, a set removes what the target has (a rank filtered out).
  book.place(t, second, [&](Result<std::vector<BreakpointReport>> r) { CHECK(r->empty()); }, false);
  CHECK(t.sent.back() == "/a.c:0");
}
