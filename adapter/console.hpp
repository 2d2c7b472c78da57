// The Debug Console's commands: a `repl` line starting with '!' (!help, !gpu ..., !sql ...) is
// answered by the session and its GPU backend, never by the debugger's evaluate, in every
// session (Python, native, a GPU trace).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "adapter/session.hpp"

namespace strata::adapter {

// Whether an evaluate is a console command: context "repl" (or none) and a first character '!'.
bool isConsoleCommand(const protocol::EvaluateArguments& args);
// Runs one command line ("!gpu top 5"); the answer is readable text.
void runConsoleCommand(Session& session, const std::string& line, std::function<void(Result<std::string>)> done);
// The commands that complete `typed` (the line up to the cursor). `firstColumn` is where the
// client counts columns from (1 or 0): each entry replaces what was typed.
std::vector<backends::CompletionEntry> consoleCompletions(std::string_view typed, std::int64_t firstColumn);

}  // namespace strata::adapter
