// The Debug Console's '!' commands: !help here, !gpu and !sql through the GPU backend.
#include "adapter/console.hpp"

namespace strata::adapter {

namespace {

struct Command {
  const char* text;   // what completion inserts
  const char* usage;  // what !help shows
  const char* what;
};

constexpr Command kCommands[] = {
    {"!help", "!help", "this list"},
    {"!gpu top ", "!gpu top [N]", "the N kernels with the most GPU time (default 10), then copies and syncs"},
    {"!gpu kernel ", "!gpu kernel NAME",
     "one kernel (a name or part of one): its launches, the slowest in full and the line that launched it"},
    {"!gpu timeline ", "!gpu timeline [START END]",
     "what ran on each GPU stream and CPU thread in a window (absolute ns; default: all), merged to fit"},
    {"!gpu start ", "!gpu start [trace|stacks]", "start collecting GPU activity in the running program"},
    {"!gpu stop", "!gpu stop", "stop collecting GPU activity"},
    {"!gpu profile ", "!gpu profile NAME [N]",
     "measure SM and DRAM throughput, achieved occupancy and GPU time of the next N launches (default 1, at most 64) "
     "of a kernel (a name or part of one) with CUPTI's range profiler; !gpu kernel NAME shows them"},
    {"!gpu crash", "!gpu crash",
     "at a crash stop: the last kernels on each GPU stream with the lines that launched them, and the crashing "
     "thread's last CUDA calls"},
    {"!sql ", "!sql SELECT ...",
     "one read-only query over the session's GPU store (tables: kernels, copies, syncs, api, markers, cpu_ops, "
     "records, strings, tracks, kernel_stats, devices, launch_sites, site_frames, kernel_metrics; see the store's README)"},
};

std::string helpText() {
  std::string out = "Debug Console commands (a line starting with '!'; anything else is evaluated in the program):\n";
  std::size_t width = 0;
  for (const auto& c : kCommands) width = std::max(width, std::string_view(c.usage).size());
  for (const auto& c : kCommands) {
    std::string usage = c.usage;
    out += "  " + usage + std::string(width + 2 - usage.size(), ' ') + c.what + "\n";
  }
  out += "To evaluate an expression that starts with '!' (C's !done), put a space or a parenthesis first: (!done)";
  return out;
}

std::string firstWord(std::string_view line) {
  std::size_t end = line.find_first_of(" \t\n");
  return std::string(line.substr(0, end));
}

}  // namespace

bool isConsoleCommand(const protocol::EvaluateArguments& args) {
  return args.context.value_or("repl") == "repl" && !args.expression.empty() && args.expression[0] == '!';
}

void runConsoleCommand(Session& session, const std::string& line, std::function<void(Result<std::string>)> done) {
  std::string rest = line.substr(1);
  std::string word = firstWord(rest);
  if (word == "help" || word.empty()) return done(helpText());
  if (word == "gpu" || word == "sql") {
    auto* gpu = session.gpu();
    if (!gpu) return done(Error{errors::kUnsupportedRequest, "!" + word + ": this session has no GPU backend", false});
    return gpu->console(rest, std::move(done));
  }
  done(Error{errors::kBadArguments, "unknown command '!" + word + "' (!help lists the commands)", false});
}

std::vector<backends::CompletionEntry> consoleCompletions(std::string_view typed, std::int64_t firstColumn) {
  std::vector<backends::CompletionEntry> out;
  // Typed without the '!' (a session with no program to evaluate in): offered all the same.
  std::string prefix = !typed.empty() && typed[0] == '!' ? std::string(typed) : "!" + std::string(typed);
  for (const auto& c : kCommands) {
    std::string_view text = c.text;
    // Only what extends the line: a command typed in full has nothing to add.
    if (prefix.size() >= text.size() || text.substr(0, prefix.size()) != prefix) continue;
    backends::CompletionEntry e;
    e.label = c.usage;
    e.text = std::string(text);
    e.type = "keyword";
    e.start = firstColumn;
    e.length = static_cast<std::int64_t>(typed.size());
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace strata::adapter
