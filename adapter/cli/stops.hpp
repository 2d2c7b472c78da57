// `strata run --break`: breakpoints given on the command line, and the report of each stop
// (thread, reason, top frames, locals of the top frame) before the program continues.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapter/cli/dap_client.hpp"

namespace strata::cli {

struct BreakSpec {
  std::string file;  // absolute
  std::int64_t line = 0;
  std::optional<std::string> condition;
};

// FILE:LINE[:CONDITION]; a relative FILE is taken from `cwd`.
Result<BreakSpec> parseBreak(const std::string& text, const std::string& cwd);

// Sends setBreakpoints for every file named, then calls done.
void setBreakpoints(DapClient& client, const std::vector<BreakSpec>& breaks,
                    std::function<void(const std::string& problem)> warn, std::function<void()> done);

// What one stop shows, gathered across several requests.
struct StopView {
  std::string session;  // a child session's name (a child process of the program); empty for the program's
  std::int64_t threadId = 0;
  std::string threadName, reason, description;
  boost::json::array frames;  // {name, file, line[, index: where a frame kept below the top ones is]}
  // The frame whose locals are shown: the top one, or under library frames the first of the
  // program's own code (the top frames are "subtle" when justMyCode hides them).
  std::string localsFrame;
  std::int64_t localsIndex = 0;
  boost::json::object locals;  // name -> value
  std::vector<std::pair<std::string, std::string>> localsInOrder;
  // At a crash: every other thread, folded to its top frames ({id, name, frames: [{name, file, line}]}).
  boost::json::array otherThreads;
  // At a crash with GPU collection on: what the GPU was doing (the adapter's !gpu crash text;
  // the Debug Console has printed it already, so only the JSON line carries it).
  std::string gpu;
};

// Reads a stop's thread, top frames and locals (threads, stackTrace, scopes, variables).
void gatherStop(DapClient& client, const boost::json::object& stoppedBody,
                std::function<void(std::shared_ptr<StopView>)> done);
// What `strata run --break` prints of it: text, or one JSON line's object.
std::string stopText(const StopView& stop);
boost::json::object stopJson(const StopView& stop);

// Reads what a stop shows, prints it (text, or one JSON line) and continues the thread.
// `session`: the child session's name, when it is one.
void reportStopAndContinue(DapClient& client, const boost::json::object& stoppedBody, bool json,
                           const std::string& session = {});
// The same, then `then` instead of continuing.
void reportStop(DapClient& client, const boost::json::object& stoppedBody, bool json, std::function<void()> then);

}  // namespace strata::cli
