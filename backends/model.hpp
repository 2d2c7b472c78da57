// Neutral types the backends speak: no DAP structs here, so a backend never depends on the
// protocol layer and the session owns the translation.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "strata/result.hpp"

namespace strata::backends {

template <class T>
using Reply = std::function<void(Result<T>)>;

enum class Console { Internal, IntegratedTerminal, ExternalTerminal };

// A launch after the adapter resolved it: argv[0] is an absolute executable path.
struct LaunchSpec {
  std::vector<std::string> argv;
  std::string displayName;         // what the user named: program path or module
  std::string cwd;                 // absolute, exists
  std::vector<std::string> environment;  // "NAME=value", complete
  bool noDebug = true;
  bool stopOnEntry = false;
  Console console = Console::Internal;
  enum class Language { Native, Python } language = Language::Native;
};

enum class OutputCategory { Stdout, Stderr, Console, Important };

struct ExitStatus {
  int exitCode = 0;
  std::optional<int> signal;  // set when the debuggee died by a signal
};

// Human name of a signal: "SIGSEGV".
std::string signalName(int signo);

struct ThreadInfo {
  std::int64_t id = 0;  // OS thread id
  std::string name;
};

struct SourceBreakpointSpec {
  std::int64_t line = 0;
  std::optional<std::int64_t> column;
  std::optional<std::string> condition, hitCondition, logMessage;
};

struct BreakpointState {
  bool verified = false;
  std::optional<std::int64_t> line;  // where it was actually placed
  std::string message;               // why it is not verified
};

// runInTerminal as the backend needs it; the session turns it into the reverse request.
struct TerminalLaunch {
  Console console = Console::IntegratedTerminal;
  std::string title;
  std::string cwd;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
};
struct TerminalProcess {
  std::optional<std::int64_t> processId, shellProcessId;
};

}  // namespace strata::backends
