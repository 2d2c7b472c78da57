// Launch resolution.
#include "adapter/launch_config.hpp"

#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "backends/process/python_locator.hpp"
#include "strata/error_ids.hpp"

namespace strata::adapter {
namespace fs = std::filesystem;
using backends::LaunchSpec;
namespace json = boost::json;

namespace {

// Whether an environment entry "NAME=value" sets `name`.
bool sets(const std::string& entry, std::string_view name) {
  return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=';
}

std::string getenvFrom(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env)
    if (sets(e, name)) return e.substr(name.size() + 1);
  return {};
}

std::string modeString(mode_t m) {
  std::string s = "---------";
  const char* flags = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i)
    if (m & (1 << (8 - i))) s[i] = flags[i];
  return s;
}

// Where strata-dap finds its Python agent and its CUDA collector: read by the adapter itself
// (the agent goes in through PYTHONPATH, the collector through CUDA_INJECTION64_PATH).
constexpr const char* kAdapterOnlyVariables[] = {"STRATA_AGENT_PYTHONPATH", "STRATA_GPU_COLLECTOR"};

Error launchError(ErrorId id, std::string message) { return Error{id, std::move(message), true}; }

// Checks that `path` is a file we can run (or, for scripts, read).
Result<void> checkFile(const std::string& what, const std::string& path, bool needExec) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    return launchError(errors::kProgramNotFound,
                       what + " '" + path + "' does not exist" +
                           (errno == ENOENT ? "" : std::string(": ") + std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    return launchError(errors::kProgramNotExecutable, what + " '" + path + "' is a directory");
  if (needExec && ((st.st_mode & 0111) == 0 || ::access(path.c_str(), X_OK) != 0))
    return launchError(errors::kProgramNotExecutable,
                       what + " '" + path + "' is not executable (mode " + modeString(st.st_mode) +
                           "); make it executable with chmod +x");
  if (!needExec && ::access(path.c_str(), R_OK) != 0)
    return launchError(errors::kProgramNotExecutable, what + " '" + path + "' is not readable");
  return {};
}

// A name without a slash is looked up on PATH, like a shell would.
std::optional<std::string> searchPath(const std::string& name, const std::string& pathVar) {
  std::stringstream ss(pathVar);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
  }
  return std::nullopt;
}

Result<std::vector<std::string>> interpreter(const json::value& python,
                                             const std::vector<std::string>& env,
                                             const std::string& cwd) {
  std::vector<std::string> cmd;
  if (python.is_string()) {
    cmd.push_back(std::string(python.get_string()));
  } else if (python.is_array()) {
    for (std::size_t i = 0; i < python.get_array().size(); ++i) {
      const auto& part = python.get_array()[i];
      if (!part.is_string())
        return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.python[" +
                                                      std::to_string(i) + "]: expected a string, got " +
                                                      protocol::kindName(part));
      cmd.push_back(std::string(part.get_string()));
    }
    if (cmd.empty())
      return launchError(errors::kBadArguments,
                         "invalid 'launch' request: arguments.python: must name an interpreter");
  } else if (!python.is_null()) {
    return launchError(errors::kBadArguments,
                       std::string("invalid 'launch' request: arguments.python: expected a string "
                                   "or an array of strings, got ") + protocol::kindName(python));
  }
  if (cmd.empty()) {
    auto search = backends::findDefaultPython(env);
    if (!search.found) {
      std::string path;
      for (const auto& d : search.pathDirs) path += (path.empty() ? "" : ":") + d;
      return launchError(
          errors::kNoPython,
          "no Python 3.10 or newer was found: looked for python3.10 and newer on PATH (" +
              (path.empty() ? std::string("empty") : path) + ") and in pyenv (" +
              (search.pyenvVersions.empty() ? std::string("neither PYENV_ROOT nor HOME is set")
                                            : search.pyenvVersions) +
              "); install one (pyenv install 3.12) or name one with \"python\": \"/path/to/python3.12\" "
              "in the launch configuration");
    }
    cmd.push_back(*search.found);
    return cmd;
  }
  if (cmd[0].find('/') == std::string::npos) {
    auto onPath = searchPath(cmd[0], getenvFrom(env, "PATH"));
    if (!onPath)
      return launchError(errors::kProgramNotFound,
                         "Python interpreter '" + cmd[0] + "' was not found on PATH");
    cmd[0] = *onPath;
  } else {
    cmd[0] = (fs::path(cwd) / cmd[0]).lexically_normal().string();
  }
  if (auto ok = checkFile("Python interpreter", cmd[0], true); !ok) return ok.takeError();
  return cmd;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<LaunchSpec> resolveLaunch(const protocol::LaunchRequestArguments& args,
                                 const std::vector<std::string>& adapterEnvironment,
                                 const std::string& adapterCwd) {
  LaunchSpec spec;
  spec.noDebug = args.noDebug.value_or(false);
  spec.stopOnEntry = args.stopOnEntry.value_or(false);
  spec.justMyCode = args.justMyCode.value_or(true);
  spec.native = args.native.value_or(false);
  spec.ranks = args.ranks.value_or(false);
  spec.stopAll = args.stopAll.value_or(true);
  spec.subProcess = args.subProcess.value_or(true);
  if (args.rankFilter) {
    if (!spec.ranks)
      return launchError(errors::kBadArguments,
                         "invalid 'launch' request: arguments.rankFilter needs \"ranks\": true (a distributed job)");
    for (std::size_t i = 0; i < args.rankFilter->size(); ++i) {
      auto r = (*args.rankFilter)[i];
      if (r < 0 || r > 1000000)
        return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.rankFilter[" + std::to_string(i) +
                                                      "]: " + std::to_string(r) + " is not a rank");
    }
    spec.rankFilter = *args.rankFilter;
  }
  if (args.ranksAddress) {
    if (!spec.ranks)
      return launchError(errors::kBadArguments,
                         "invalid 'launch' request: arguments.ranksAddress needs \"ranks\": true (a distributed job)");
    // A host name, an IPv4 address, or an IPv6 address (bare or in brackets).
    std::string_view addr = *args.ranksAddress;
    if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']') addr = addr.substr(1, addr.size() - 2);
    in6_addr v6{};
    bool isV6 = addr.find(':') != std::string_view::npos && ::inet_pton(AF_INET6, std::string(addr).c_str(), &v6) == 1;
    if (addr.empty() || addr.find_first_of(" \t\r\n[]") != std::string_view::npos ||
        (addr.find(':') != std::string_view::npos && !isV6))
      return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.ranksAddress: '" +
                                                    *args.ranksAddress + "' is not a host name, IPv4 or IPv6 address");
    spec.ranksAddress = *args.ranksAddress;
  }
  if (spec.ranks && spec.native)
    return launchError(errors::kBadArguments,
                       "invalid 'launch' request: \"ranks\": true and \"native\": true cannot go together yet "
                       "(the ranks of a job are debugged in Python; attach to one rank with \"native\" for its C/C++)");
  if (spec.ranks && spec.noDebug)
    return launchError(errors::kBadArguments, "invalid 'launch' request: \"ranks\": true debugs every rank; it "
                                              "cannot go with \"noDebug\": true");

  // Environment: the adapter's less what only tells strata-dap where its own parts are, then
  // the launch's changes (null removes a variable). An IDE sets those for the adapter it starts;
  // the program is the user's and gets them only from the launch's env.
  std::vector<std::string> env;
  for (const auto& e : adapterEnvironment)
    if (std::none_of(std::begin(kAdapterOnlyVariables), std::end(kAdapterOnlyVariables),
                     [&e](const char* name) { return sets(e, name); }))
      env.push_back(e);
  for (const auto& [name, value] : args.env) {
    if (name.empty() || name.find('=') != std::string::npos)
      return launchError(errors::kBadArguments,
                         "invalid 'launch' request: arguments.env: '" + name + "' is not a valid variable name");
    // A named copy: clang before 16 cannot capture a structured binding (the fuzz build).
    const std::string& key = name;
    env.erase(std::remove_if(env.begin(), env.end(), [&key](const std::string& e) { return sets(e, key); }),
              env.end());
    if (value) env.push_back(name + "=" + *value);
  }
  spec.environment = env;

  std::string cwd = args.cwd.value_or(adapterCwd);
  if (cwd.empty()) cwd = adapterCwd;
  cwd = (fs::path(adapterCwd) / cwd).lexically_normal().string();
  std::error_code ec;
  if (!fs::exists(cwd, ec))
    return launchError(errors::kBadCwd, "cwd '" + cwd + "' does not exist");
  if (!fs::is_directory(cwd, ec))
    return launchError(errors::kBadCwd, "cwd '" + cwd + "' is not a directory");
  if (::access(cwd.c_str(), X_OK) != 0)
    return launchError(errors::kBadCwd, "cwd '" + cwd + "' cannot be entered: " + std::strerror(errno));
  if (cwd.size() > 1 && cwd.back() == '/') cwd.pop_back();
  spec.cwd = cwd;

  std::string console = args.console.value_or("internalConsole");
  if (console == "internalConsole") spec.console = backends::Console::Internal;
  else if (console == "integratedTerminal") spec.console = backends::Console::IntegratedTerminal;
  else if (console == "externalTerminal") spec.console = backends::Console::ExternalTerminal;
  else
    return launchError(errors::kBadArguments,
                       "invalid 'launch' request: arguments.console: expected 'internalConsole', "
                       "'integratedTerminal' or 'externalTerminal', got '" + console + "'");

  if (args.coreFile) {
    // A core file: no program runs; `program` (optional) is the executable the core came from.
    if (args.coreFile->empty())
      return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.coreFile: the path is empty");
    if (args.module || spec.noDebug || spec.ranks || args.trace)
      return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.coreFile opens a core file; it cannot go "
                                                "with 'module', 'noDebug', 'ranks' or 'trace'");
    spec.coreFile = (fs::path(cwd) / *args.coreFile).lexically_normal().string();
    if (auto ok = checkFile("coreFile", spec.coreFile, false); !ok) return ok.takeError();
    if (args.sysroot) {
      spec.sysroot = (fs::path(cwd) / *args.sysroot).lexically_normal().string();
      if (!fs::is_directory(spec.sysroot, ec))
        return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.sysroot: '" + spec.sysroot + "' is not a folder");
    }
    spec.displayName = spec.coreFile;
    if (args.program && !args.program->empty()) {
      std::string program = (fs::path(cwd) / *args.program).lexically_normal().string();
      if (auto ok = checkFile("program", program, false); !ok) return ok.takeError();
      spec.argv.push_back(program);
    }
    return spec;
  }
  if (args.sysroot)
    return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.sysroot goes with 'coreFile'");
  if (args.coreOnCrash) {
    if (spec.noDebug)
      return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.coreOnCrash needs the debugger: it cannot go with \"noDebug\": true");
    spec.coreOnCrash = (fs::path(cwd) / *args.coreOnCrash).lexically_normal().string();
    if (!fs::is_directory(spec.coreOnCrash, ec))
      return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.coreOnCrash: '" + spec.coreOnCrash + "' is not a folder");
    if (::access(spec.coreOnCrash.c_str(), W_OK) != 0)
      return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.coreOnCrash: '" + spec.coreOnCrash + "' is not writable: " + std::strerror(errno));
  }
  if (args.onDisconnect) {
    if (*args.onDisconnect != "terminate" && *args.onDisconnect != "detach")
      return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.onDisconnect is '" +
                                                    *args.onDisconnect + "': expected \"terminate\" or \"detach\"");
    spec.detachOnDisconnect = *args.onDisconnect == "detach";
  }
  if (args.module) {
    if (args.program)
      return launchError(errors::kBadArguments,
                         "invalid 'launch' request: give either 'program' or 'module', not both");
    auto py = interpreter(args.python, env, cwd);
    if (!py) return py.takeError();
    spec.language = LaunchSpec::Language::Python;
    spec.interpreter = *py;
    spec.argv = *py;
    spec.argv.push_back("-m");
    spec.argv.push_back(*args.module);
    spec.displayName = *args.module;
  } else {
    if (!args.program || args.program->empty())
      return launchError(errors::kBadArguments,
                         "invalid 'launch' request: arguments.program: required field is missing "
                         "(or give 'module' to run a Python module)");
    std::string program = *args.program;
    bool python = endsWith(program, ".py") || endsWith(program, ".pyw") || !args.python.is_null();
    if (program.find('/') == std::string::npos && !python) {
      if (fs::exists(fs::path(cwd) / program, ec)) {
        program = (fs::path(cwd) / program).string();
      } else if (auto found = searchPath(program, getenvFrom(env, "PATH"))) {
        program = *found;
      } else {
        return launchError(errors::kProgramNotFound,
                           "program '" + program + "' does not exist in '" + cwd + "' or on PATH");
      }
    } else {
      program = (fs::path(cwd) / program).lexically_normal().string();
    }
    if (auto ok = checkFile("program", program, !python); !ok) return ok.takeError();
    spec.displayName = program;
    if (python) {
      auto py = interpreter(args.python, env, cwd);
      if (!py) return py.takeError();
      spec.language = LaunchSpec::Language::Python;
      spec.interpreter = *py;
      spec.argv = *py;
    }
    spec.argv.push_back(program);
  }
  spec.argv.insert(spec.argv.end(), args.args.begin(), args.args.end());
  return spec;
}

namespace {

std::string launchCwd(const protocol::LaunchRequestArguments& args, const std::string& adapterCwd) {
  std::string cwd = args.cwd.value_or(adapterCwd);
  if (cwd.empty()) cwd = adapterCwd;
  return (fs::path(adapterCwd) / cwd).lexically_normal().string();
}

}  // namespace

Result<std::string> resolveGpuStore(const protocol::LaunchRequestArguments& args, const std::string& adapterCwd) {
  if (!args.gpuStore) return std::string();
  if (args.gpuStore->empty())
    return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.gpuStore: the path is empty");
  std::string path = (fs::path(launchCwd(args, adapterCwd)) / *args.gpuStore).lexically_normal().string();
  std::error_code ec;
  if (fs::exists(path, ec))
    return launchError(errors::kStoreIo, "gpuStore '" + path +
                                             "' already exists: Strata never writes over a file; name a new one "
                                             "(or open that store with \"trace\")");
  auto dir = fs::path(path).parent_path();
  if (!fs::is_directory(dir, ec))
    return launchError(errors::kStoreIo, "gpuStore '" + path + "': the folder '" + dir.string() + "' does not exist");
  return path;
}

Result<backends::GpuTraceSpec> resolveTraceLaunch(const protocol::LaunchRequestArguments& args,
                                                  const std::string& adapterCwd) {
  if (args.program || args.module)
    return launchError(errors::kBadArguments,
                       "invalid 'launch' request: give either 'trace' (open a recorded GPU trace) or "
                       "'program'/'module' (run a program), not both");
  if (!args.trace || args.trace->empty())
    return launchError(errors::kBadArguments, "invalid 'launch' request: arguments.trace: the path is empty");
  backends::GpuTraceSpec spec;
  spec.path = (fs::path(launchCwd(args, adapterCwd)) / *args.trace).lexically_normal().string();
  struct stat st{};
  if (::stat(spec.path.c_str(), &st) != 0)
    return launchError(errors::kStoreIo, "trace '" + spec.path + "' does not exist" +
                                             (errno == ENOENT ? "" : std::string(": ") + std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return launchError(errors::kStoreIo, "trace '" + spec.path + "' is a directory");
  if (::access(spec.path.c_str(), R_OK) != 0)
    return launchError(errors::kStoreIo, "trace '" + spec.path + "' is not readable: " + std::strerror(errno));
  auto store = resolveGpuStore(args, adapterCwd);
  if (!store) return store.takeError();
  spec.storePath = *store;
  return spec;
}

}  // namespace strata::adapter
