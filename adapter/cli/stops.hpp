// `strata run --break`: breakpoints given on the command line, and the report of each stop
// (thread, reason, top frames, locals of the top frame) before the program continues.
#pragma once

#include <functional>
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

// Reads what a stop shows, prints it (text, or one JSON line) and continues the thread.
void reportStopAndContinue(DapClient& client, const boost::json::object& stoppedBody, bool json);
// The same, then `then` instead of continuing.
void reportStop(DapClient& client, const boost::json::object& stoppedBody, bool json, std::function<void()> then);

}  // namespace strata::cli
