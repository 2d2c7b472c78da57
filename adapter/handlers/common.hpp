// Helpers the debugging handlers share: finding the debuggee, resolving session ids, answering
// breakpoint requests.
#pragma once

#include "adapter/convert.hpp"
#include "adapter/session.hpp"

namespace strata::adapter {

// The backend of a live debuggee, or the error a request gets without one.
inline Result<backends::Backend*> liveBackend(Session& session) {
  if (!session.backend() || session.debuggeeEnded())
    return Error{errors::kNoDebuggee, "there is no debuggee (launch or attach first)", false};
  return session.backend();
}

// The backend a thread belongs to (the one that reported it), if the debuggee lives.
inline Result<backends::Backend*> threadBackend(Session& session, std::int64_t threadId) {
  auto live = liveBackend(session);
  if (!live) return live;
  auto* owner = session.threadOwner(threadId);
  return owner ? owner : *live;
}

// A session id mapped back to its owner, or an error naming what was not found.
inline Result<Session::Handles::Entry> resolveId(Session::Handles& table, std::int64_t id,
                                                 const std::string& what) {
  auto e = table.find(id);
  if (!e)
    return Error{errors::kBadArguments,
                 "unknown " + what + " " + std::to_string(id) +
                     " (ids are valid only until the program runs again)",
                 false};
  return *e;
}

// The same for a request that the id's owner answers: a debugger's ids (its parts' too) need its
// debuggee alive, those of a backend beside it (the GPU backend's launch frames) do not.
inline Result<Session::Handles::Entry> resolveOwnedId(Session& session, Session::Handles& table, std::int64_t id,
                                                      const std::string& what) {
  if (auto e = table.find(id); e && e->owner && e->owner != session.backend() && !session.isPart(e->owner)) return *e;
  if (auto live = liveBackend(session); !live) return live.takeError();
  return resolveId(table, id, what);
}

// Why a launch or attach cannot start now: a debuggee already, a trace opened or being opened.
inline std::optional<Error> cannotStart(Session& session) {
  if (session.backend()) return Error{errors::kWrongState, "this session already has a debuggee", true};
  if (session.state() == Session::State::Launched)
    return Error{errors::kWrongState, "this session has already opened a GPU trace", true};
  if (session.gpu() && session.gpu()->opening())
    return Error{errors::kWrongState, "this session is opening a GPU trace", true};
  return std::nullopt;
}

// A count the client may give (a limit, a most): its default when absent, else between 1 and
// `most`, or the error that says which argument is wrong.
inline Result<std::int64_t> countArgument(std::string_view command, std::string_view name,
                                          std::optional<std::int64_t> given, std::int64_t byDefault, std::int64_t most) {
  std::int64_t n = given.value_or(byDefault);
  if (n >= 1 && n <= most) return n;
  return Error{errors::kBadArguments,
               "invalid '" + std::string(command) + "' request: arguments." + std::string(name) + ": " + std::to_string(n) +
                   " is not between 1 and " + std::to_string(most),
               false};
}

// The GPU service of the session, or the error a GPU request gets without one.
inline Result<backends::GpuService*> gpuService(Session& session) {
  if (auto* gpu = session.gpu()) return gpu;
  return Error{errors::kUnsupportedRequest, "this session has no GPU backend", false};
}

// The answer to a request for frames or variables whose reply came after their thread ran
// again (Session::current): what it lists belongs to a stop that is over.
inline Error ranAgain(const std::string& what) {
  return Error{errors::kWrongState, "the program ran again before " + what + " arrived; ask again when it stops",
               false};
}

// The answer to a breakpoint request made before there is a program to place them in.
inline protocol::BreakpointsBody notYetLaunched(std::size_t count) {
  protocol::BreakpointsBody out;
  for (std::size_t i = 0; i < count; ++i) {
    protocol::Breakpoint b;
    b.message = "no program has been launched yet";
    b.reason = "pending";
    out.breakpoints.push_back(std::move(b));
  }
  return out;
}

// The same for breakpoints the session keeps until launch/attach: they carry the ids that
// `breakpoint` changed events use once they are placed.
inline protocol::BreakpointsBody notYetLaunched(const std::vector<std::int64_t>& ids) {
  protocol::BreakpointsBody out = notYetLaunched(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.breakpoints[i].id = ids[i];
    out.breakpoints[i].message = "not placed yet: the program has not been launched";
  }
  return out;
}

// Turns a backend's breakpoint states into the response body, with session-global ids (and the
// request's source on each, when given: setBreakpoints).
inline backends::Reply<std::vector<backends::BreakpointReport>> breakpointsReply(
    Session& session, backends::Backend* owner, Responder respond,
    std::optional<protocol::Source> source = std::nullopt) {
  auto self = session.shared_from_this();
  return [self, owner, respond, source](Result<std::vector<backends::BreakpointReport>> r) {
    if (!r) return respond(r.takeError());
    protocol::BreakpointsBody out;
    for (const auto& s : *r) {
      out.breakpoints.push_back(toProtocol(*self, owner, s));
      if (source) out.breakpoints.back().source = source;
    }
    respond(body(out));
  };
}

}  // namespace strata::adapter
