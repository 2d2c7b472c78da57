// `strata stacks PID`: every thread's stack of a running process, read from the outside
// (backends/stacks), printed merged; `--tree` merges several processes into one.
#include "adapter/cli/stacks.hpp"
#include "adapter/cli/session_cmd.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "strata/stacks/stacks.hpp"

namespace strata::cli {

namespace {

namespace json = boost::json;

struct Options {
  stacks::Options read;
  bool json = false;
  bool children = false;
  bool tree = false;  // every thread of every process merged into one tree (STAT style)
};

const char* usage() {
  return "usage: strata stacks [--json] [--native|--python-only] [--full] [--locals] [--children]\n"
         "                     [--max-frames N] [--python-layout 3.N] PID\n"
         "       strata stacks --tree [--json] [--python-only] [--children] PID...";
}

int usageError(const std::string& message) {
  std::fprintf(stderr, "strata: stacks: %s\n%s\n", message.c_str(), usage());
  return 2;
}

}  // namespace

int stacksCommand(int argc, char** argv, int first) {
  Options o;
  std::string pidText, session;
  bool fromSession = false;
  std::vector<std::string> morePids;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") o.json = true;
    else if (a == "--native") o.read.nativeOnly = true;
    else if (a == "--python-only") o.read.pythonOnly = true;
    else if (a == "--full") o.read.full = true;
    else if (a == "--locals") o.read.locals = true;
    else if (a == "--children") o.children = true;
    else if (a == "--tree") o.tree = true;
    else if (a == "--session") {
      if (i + 1 >= argc) return usageError("--session needs a name");
      session = argv[++i];
      fromSession = true;
    }
    else if (a == "--max-frames" || a == "--python-layout") {
      if (i + 1 >= argc) return usageError(a + " needs a value");
      std::string v = argv[++i];
      char* end = nullptr;
      if (a == "--max-frames") {
        long n = std::strtol(v.c_str(), &end, 10);
        if (n <= 0 || *end != '\0') return usageError("--max-frames needs a positive number, not '" + v + "'");
        o.read.maxFrames = static_cast<std::size_t>(n);
      } else {
        long minor = v.rfind("3.", 0) == 0 ? std::strtol(v.c_str() + 2, &end, 10) : -1;
        if (minor < 0 || !end || *end != '\0') return usageError("--python-layout needs a version like 3.12, not '" + v + "'");
        o.read.layoutMinor = static_cast<int>(minor);
      }
    } else if (!a.empty() && a[0] != '-' && (pidText.empty() || o.tree)) {
      if (!pidText.empty()) morePids.push_back(a);
      else pidText = a;
    } else {
      return usageError("unexpected argument '" + a + "'");
    }
  }
  // --tree takes several PIDs (the ranks of a job, or a launcher with --children).
  for (const auto& more : morePids)
    if (!o.tree) return usageError("unexpected argument '" + more + "'");
  if (o.read.nativeOnly && o.read.pythonOnly) return usageError("--native and --python-only exclude each other");
  char* end = nullptr;
  // No PID: the program of the session (strata session start), when there is one.
  if (pidText.empty() || fromSession) {
    if (!pidText.empty()) return usageError("--session and a PID exclude each other");
    std::string problem;
    std::int64_t sessionPid = sessionProgramPid(session, problem);
    if (!sessionPid) {
      std::fprintf(stderr, "strata: stacks needs a process id: strata stacks [--json] PID (%s)\n", problem.c_str());
      return 2;
    }
    pidText = std::to_string(sessionPid);
  }
  long pid = std::strtol(pidText.c_str(), &end, 10);
  if (pid <= 0 || *end != '\0') {
    std::fprintf(stderr, "strata: stacks needs a process id: strata stacks [--json] PID\n");
    return 2;
  }

  std::vector<pid_t> pids{static_cast<pid_t>(pid)};
  for (const auto& more : morePids) {
    long p = std::strtol(more.c_str(), &end, 10);
    if (p <= 0 || *end != '\0') return usageError("'" + more + "' is not a process id");
    pids.push_back(static_cast<pid_t>(p));
  }
  if (o.children) pids = stacks::withDescendants(std::move(pids));
  if (o.tree) {
    auto tree = stacks::parallelStacks(std::move(pids), false, o.read.pythonOnly);
    if (!tree) {
      std::fprintf(stderr, "strata: %s\n", tree.error().message.c_str());
      return 1;
    }
    if (o.json) std::printf("%s\n", json::serialize(tree->json).c_str());
    else std::fputs(tree->text.c_str(), stdout);
    return 0;
  }
  json::array reports;
  std::string text;
  int status = 0;
  for (std::size_t i = 0; i < pids.size(); ++i) {
    json::object report;
    std::string part;
    auto r = stacks::inspectProcess(pids[i], o.read, report, part);
    if (!r) {
      // The named process failing is the command failing; a child that ended meanwhile or
      // cannot be read is reported and the others still are.
      if (i == 0) {
        if (o.json) std::printf("%s\n", json::serialize(json::object{{"error", r.error().message}}).c_str());
        else std::fprintf(stderr, "strata: %s\n", r.error().message.c_str());
        return 1;
      }
      // A child that ended since it was listed (a worker exiting) is no failure of the command.
      const bool ended = r.error().id == errors::kNoSuchProcess;
      std::string why = ended ? "ended before its stacks were read" : r.error().message;
      const std::string self = "process " + std::to_string(pids[i]) + ": ";
      if (why.rfind(self, 0) == 0) why.erase(0, self.size());  // the reader's message names it already
      report = json::object{{"pid", pids[i]}, {"error", why}};
      part = self + why + "\n";
      if (!ended) status = 1;
    }
    reports.push_back(std::move(report));
    text += (i ? "\n" : "") + part;
  }
  if (o.json) {
    json::object out = std::move(reports[0].as_object());
    if (o.children) {
      json::array kids(reports.begin() + 1, reports.end());
      out["children"] = std::move(kids);
    }
    std::printf("%s\n", json::serialize(out).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  return status;
}

}  // namespace strata::cli
