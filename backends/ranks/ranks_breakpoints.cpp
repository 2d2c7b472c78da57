// The ranks of a job: one set of breakpoints for every member, each placement merged for the client (ranks_backend.hpp).
#include "backends/ranks/ranks_backend.hpp"


namespace strata::backends {

namespace {
bool sameReport(const BreakpointReport& a, const BreakpointReport& b) {
  return a.verified == b.verified && a.line == b.line && a.message == b.message && a.pending == b.pending;
}
using Set = BreakpointSet;
}  // namespace

// ---- breakpoints: one set for every member ----------------------------------------------------

BreakpointReport RanksBackend::merged(const Set& set, std::size_t i) const {
  BreakpointReport out;
  out.id = set.ids[i];
  if (set.kind == Set::Kind::Source) out.path = set.path;
  const BreakpointReport* first = nullptr;
  auto p = placements_.find(set.key());
  if (p != placements_.end() && i < p->second.placed.size())
    for (const auto& [member, r] : p->second.placed[i]) {
      if (!first) first = &r;
      if (r.verified) {
        out.verified = true;
        out.line = r.line;
        return out;
      }
    }
  if (first) {
    out.message = first->message;
    out.line = first->line;
    out.pending = first->pending;
  } else {
    out.pending = true;
    out.message = rankFilter_.empty() ? "no process of the job has started yet: set in each one as it starts"
                                      : "no process of the job that rankFilter names has started yet";
  }
  return out;
}

void RanksBackend::tellChanges(const Set& set) {
  auto& told = placements_[set.key()].told;
  for (std::size_t i = 0; i < set.size() && i < told.size(); ++i) {
    BreakpointReport now = merged(set, i);
    if (sameReport(now, told[i])) continue;
    told[i] = now;
    if (set.kind != Set::Kind::Exception) host_.breakpointChanged(now);
  }
}

void RanksBackend::fromMember(Member& m, const Set& set, const std::vector<BreakpointReport>& reports) {
  auto& placed = placements_[set.key()].placed;
  for (std::size_t i = 0; i < reports.size() && i < placed.size(); ++i) placed[i][m.index] = reports[i];
}

// The book's id for a breakpoint id a member gave (its stops and changes name those).
std::int64_t RanksBackend::bookId(const Member& m, std::int64_t theirs) const {
  return book_.ours(m.backend.get(), theirs).value_or(theirs);
}

void RanksBackend::applySet(Member& m, const SetPtr& set, std::function<void()> done) {
  if (m.gone || !book_.current(set)) return done();
  std::size_t index = m.index;
  std::weak_ptr<bool> alive = alive_;
  book_.place(*m.backend, set, [this, alive, index, set, done](Result<std::vector<BreakpointReport>> r) {
    if (alive.expired()) return;
    if (r && book_.current(set)) fromMember(*members_[index], *set, *r);
    done();
  }, m.breakpointsOn);  // filters go to every member (BreakpointBook::send)
}

// A member that just came: every set the client has, then what changed for the client.
void RanksBackend::applyAll(Member& m, std::function<void()> done) {
  std::size_t index = m.index;
  std::weak_ptr<bool> alive = alive_;
  book_.replay(*m.backend, [this, alive, index](const SetPtr& set, Result<std::vector<BreakpointReport>> r) {
    if (!alive.expired() && r && book_.current(set)) fromMember(*members_[index], *set, *r);
  }, [this, alive, done] {
    if (alive.expired()) return;
    for (auto& [key, set] : book_.sets()) tellChanges(*set);
    done();
  }, m.breakpointsOn);
}

void RanksBackend::sendSet(Set wanted, Reply<std::vector<BreakpointReport>> reply) {
  auto set = book_.keep(std::move(wanted));
  auto& placement = placements_[set->key()];
  placement.placed.assign(set->size(), {});
  placement.told.clear();
  std::vector<std::size_t> targets;
  for (auto& m : members_)
    if (m->ready && !m->gone) targets.push_back(m->index);
  auto left = std::make_shared<std::size_t>(targets.size() + 1);
  std::weak_ptr<bool> alive = alive_;
  auto one = [this, alive, left, set, reply] {
    if (--*left || alive.expired()) return;
    std::vector<BreakpointReport> out;
    for (std::size_t i = 0; i < set->size(); ++i) out.push_back(merged(*set, i));
    if (book_.current(set)) placements_[set->key()].told = out;
    if (set->kind == Set::Kind::Exception)
      for (auto& r : out) r.id.reset(), r.path.reset();
    reply(std::move(out));
  };
  for (auto index : targets) applySet(*members_[index], set, one);
  one();
}

void RanksBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  sendSet(set, std::move(reply));
}

void RanksBackend::onBreakpoint(Member& m, const BreakpointReport& report) {
  if (!report.id) return;
  auto ours = book_.ours(m.backend.get(), *report.id);
  if (!ours) return;
  auto where = book_.where(*ours);
  if (!where) return;
  auto& [set, i] = *where;
  auto& placed = placements_[set->key()].placed;
  if (i < placed.size()) placed[i][m.index] = report;
  tellChanges(*set);
}

}  // namespace strata::backends
