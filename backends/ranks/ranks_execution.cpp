// The ranks of a job: stops, continues, steps and pauses across members, with stopAll or each
// rank alone (ranks_backend.hpp).
#include "backends/ranks/ranks_backend.hpp"

#include <algorithm>

namespace strata::backends {

// ---- execution across members -----------------------------------------------------------------

void RanksBackend::pauseOthers(const Member& except) {
  for (auto& m : members_) {
    if (m.get() == &except || m->gone || !m->live || !m->configured || m->stopped || m->pausing) continue;
    m->pausing = true;
    m->backend->pause(anyThread(*m), [](Result<void>) {});
  }
}

void RanksBackend::onStopped(Member& m, StopReport stop) {
  if (m.gone) return;
  bool induced = m.pausing && stop.reason == "pause";
  m.pausing = false;
  m.stopped = true;
  if (stop.threadId) {
    if (!m.remote) threadOwner_[*stop.threadId] = m.index;
    m.threads.insert(*stop.threadId);
  }
  for (auto& id : stop.hitBreakpointIds) id = bookId(m, id);
  stop.breakpointsOwner = nullptr;  // the book's ids are this backend's
  if (induced) return;  // the stop of another member, already reported as stopping every one
  // A rank whose rank was not known when it came (a spawned rank sets RANK itself): learn it
  // now; rankFilter may leave it out, and then it runs on with its breakpoints removed.
  if (!m.rank && (stop.reason == "breakpoint" || stop.reason == "function breakpoint")) {
    std::size_t index = m.index;
    std::weak_ptr<bool> alive = alive_;
    return learnRank(m, [this, alive, index, stop] {
      if (alive.expired()) return;
      Member& mm = *members_[index];
      if (mm.gone) return;
      if (mm.rank && !rankWanted(mm)) {
        mm.breakpointsOn = false;
        mm.stopped = false;
        std::weak_ptr<bool> alive2 = alive_;
        return applyAll(mm, [this, alive2, index] {
          if (alive2.expired()) return;
          Member& m3 = *members_[index];
          m3.backend->resume(anyThread(m3), false, [](Result<bool>) {});
        });
      }
      reportStop(mm, stop);
    });
  }
  reportStop(m, std::move(stop));
}

void RanksBackend::reportStop(Member& m, StopReport stop) {
  lastStopped_ = m.index;
  m.lastStopReason = stop.reason;
  if (stopAll_) {
    stop.allThreadsStopped = true;
    pauseOthers(m);
  } else {
    stop.allThreadsStopped = false;
    for (auto t : m.threads)
      if (!stop.threadId || t != *stop.threadId) stop.alsoStopped.push_back(sessionTid(m, t));
  }
  if (stop.threadId) stop.threadId = sessionTid(m, *stop.threadId);
  if (!m.viaAdapter && (!stop.description.empty() || stop.reason != "pause"))
    stop.description = label(m) + ": " + (stop.description.empty() ? stop.reason : stop.description);
  host_.stopped(stop);
}

void RanksBackend::onContinued(Member& m, std::int64_t threadId, bool allThreads) {
  if (m.gone) return;
  if (allThreads) m.stopped = false;
  if (threadId && !m.remote) threadOwner_[threadId] = m.index;
  // All of a member's threads went (an attached member's snapshot ends when its agent is in):
  // they run on, each said so, and the other members' threads stay as they are, unless every
  // member runs now.
  if (allThreads) {
    bool othersStopped = !stopAll_ || std::any_of(members_.begin(), members_.end(), [&](const auto& o) {
      return o.get() != &m && !o->gone && o->stopped;
    });
    if (othersStopped) {
      if (threadId && !m.threads.count(threadId)) host_.continued(sessionTid(m, threadId), false);
      for (auto t : m.threads) host_.continued(sessionTid(m, t), false);
      return;
    }
  }
  host_.continued(sessionTid(m, threadId), allThreads);
}

void RanksBackend::onThread(Member& m, std::int64_t threadId, bool started) {
  if (started) {
    if (!m.remote) threadOwner_[threadId] = m.index;
    m.threads.insert(threadId);
  } else {
    if (!m.remote) threadOwner_.erase(threadId);
    m.threads.erase(threadId);
  }
  host_.threadChanged(sessionTid(m, threadId), started);
}

void RanksBackend::resume(std::int64_t sessionThread, bool singleThread, Reply<bool> reply) {
  std::int64_t threadId = 0;
  Member* owner = memberOf(sessionThread, &threadId);
  if (!owner) return reply(Error{errors::kBadArguments, "thread " + std::to_string(sessionThread) + " belongs to no process of this job", false});
  if (singleThread || !stopAll_) {
    owner->stopped = singleThread ? owner->stopped : false;
    std::weak_ptr<bool> alive = alive_;
    std::size_t index = owner->index;
    return owner->backend->resume(threadId, singleThread, [this, alive, index, threadId, reply](Result<bool> r) {
      if (!r) return reply(r.takeError());
      bool all = *r && stopAll_;
      reply(all);
      if (alive.expired() || all || !*r) return;
      // The rest of this member's threads went too; the other members stay stopped.
      asio::post(io_, [this, alive, index, threadId] {
        if (alive.expired()) return;
        const Member& mm = *members_[index];
        for (auto t : mm.threads)
          if (t != threadId) host_.continued(sessionTid(mm, t), false);
      });
    });
  }
  // Every member goes on (those still pausing too: the resume drops their pause).
  auto left = std::make_shared<std::size_t>(1);
  auto failed = std::make_shared<std::optional<Error>>();
  auto finish = [left, failed, reply] {
    if (--*left) return;
    if (*failed) return reply(std::move(**failed));
    reply(true);
  };
  for (auto& m : members_) {
    if (m->gone || !m->live || !(m->stopped || m->pausing || m.get() == owner)) continue;
    bool mine = m.get() == owner;
    m->stopped = m->pausing = false;
    ++*left;
    m->backend->resume(mine ? threadId : anyThread(*m), false, [mine, failed, finish](Result<bool> r) {
      if (!r && mine) *failed = r.takeError();
      finish();
    });
  }
  finish();
}

void RanksBackend::step(StepKind kind, const StepOptions& options, Reply<void> reply) {
  StepOptions o = options;
  Member* owner = memberOf(options.threadId, &o.threadId);
  if (!owner) return reply(Error{errors::kBadArguments, "thread " + std::to_string(options.threadId) + " belongs to no process of this job", false});
  owner->stopped = false;
  if (stopAll_ || o.singleThread) return owner->backend->step(kind, o, std::move(reply));
  // The rest of this member's threads go too; the other members stay stopped.
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = owner->index;
  std::int64_t threadId = o.threadId;
  owner->backend->step(kind, o, [this, alive, index, threadId, reply](Result<void> r) {
    bool ok = static_cast<bool>(r);
    reply(std::move(r));
    if (alive.expired() || !ok) return;
    asio::post(io_, [this, alive, index, threadId] {
      if (alive.expired()) return;
      const Member& mm = *members_[index];
      for (auto t : mm.threads)
        if (t != threadId) host_.continued(sessionTid(mm, t), false);
    });
  });
}

void RanksBackend::pause(std::int64_t sessionThread, Reply<void> reply) {
  std::int64_t threadId = 0;
  Member* owner = memberOf(sessionThread, &threadId);
  if (!owner && !members_.empty()) owner = members_.front().get();
  if (!owner) return reply(Error{errors::kBadArguments, "no process of the job has started yet", false});
  owner->backend->pause(threadId, std::move(reply));
}

}  // namespace strata::backends
