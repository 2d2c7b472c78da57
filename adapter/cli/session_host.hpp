// The background process that holds a `strata session` (started by `strata session start`,
// serving one JSON line per connection on its socket) and the folder where sessions live:
// $XDG_RUNTIME_DIR/strata/sessions (0700, the user's own), NAME.sock, NAME.token (0600),
// NAME.json (who holds it) and NAME.log.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "adapter/cli/session_core.hpp"
#include "strata/result.hpp"

namespace strata::cli {

inline constexpr std::int64_t kDefaultTimeoutMs = 30000;  // of a command that waits for a stop

struct SessionFiles {
  std::filesystem::path socket, token, info, log;
};

// The sessions folder, made when missing; an error when it is not the user's own.
Result<std::filesystem::path> sessionsDir();
SessionFiles filesOf(const std::filesystem::path& dir, const std::string& name);
std::string readFile(const std::filesystem::path& p);
void removeFiles(const SessionFiles& f);
// Live sessions by name; the files of dead ones removed on the way.
std::vector<std::string> liveSessions(const std::filesystem::path& dir);

// What goes over the socket for an answer: its data with `ok` and `text`.
boost::json::object answerJson(const Answer& a);

// In the forked process: holds the session until `end`; the start's answer goes to `answerFd`.
[[noreturn]] void runHost(const std::string& name, const SessionFiles& files, const SessionStart& spec,
                          Millis timeout, int answerFd);

}  // namespace strata::cli
