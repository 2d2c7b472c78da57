// `strata session start|list|end` and the short commands that drive a session from a terminal or
// an agent (`strata break|clear|continue|next|step|out|pause|wait|threads|stack|locals|eval`,
// `strata gpu` and `strata stacks` without a file or process): each one a connection to the
// background process that `session start` left holding the session, on a Unix socket under
// $XDG_RUNTIME_DIR/strata/sessions (0700, a token beside it, both the user's own).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::cli {

// argv[first..] are `session`'s arguments (start|list|end ...). Returns the exit status.
int sessionCommand(int argc, char** argv, int first);
// Whether `command` is one of the short commands; then runs it (argv[first..] its arguments).
bool isSessionVerb(std::string_view command);
int sessionVerb(std::string_view command, int argc, char** argv, int first);
// Whether any session of this user runs (`strata gpu top` with no FILE goes to it then).
bool sessionsRunning();
// A Debug Console command (`!gpu top`...) in the session, the rest of argv appended.
int sessionConsole(const std::string& text, int argc, char** argv, int first);
// The pid of the program of the session named (or the only one), for `strata stacks` with no PID;
// 0 with `problem` set when there is none.
std::int64_t sessionProgramPid(const std::string& name, std::string& problem);

}  // namespace strata::cli
