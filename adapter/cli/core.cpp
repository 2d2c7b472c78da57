// `strata core CORE [PROGRAM]`: a core file read as `strata stacks` reads a live process (the
// reading is backends/stacks' CoreProcess).
#include <cstdio>
#include <cstdlib>
#include <string>

#include <boost/json.hpp>

#include "adapter/cli/stacks.hpp"
#include "strata/core/core_writer.hpp"
#include "strata/stacks/core_process.hpp"

namespace strata::cli {

namespace {

namespace json = boost::json;

const char* coreUsage() {
  return "usage: strata core [--json] [--native|--python-only] [--full] [--locals] [--max-frames N]\n"
         "                   [--sysroot DIR] [--python-layout 3.N] CORE [PROGRAM]\n"
         "       strata core --dump [--json] PID [FILE]";
}

int coreUsageError(const std::string& message) {
  std::fprintf(stderr, "strata: core: %s\n%s\n", message.c_str(), coreUsage());
  return 2;
}

}  // namespace

// `strata core --dump PID [FILE]`: the core of a running process, which runs on.
int dumpCommand(const std::string& pidText, std::string file, bool asJson) {
  char* end = nullptr;
  long pid = std::strtol(pidText.c_str(), &end, 10);
  if (pid <= 0 || *end != '\0') return coreUsageError("--dump needs a process id, not '" + pidText + "'");
  if (file.empty()) file = "core." + pidText;  // gcore's name
  auto r = core::dumpCore(static_cast<pid_t>(pid), file);
  if (!r) {
    if (asJson) std::printf("%s\n", json::serialize(json::object{{"error", r.error().message}}).c_str());
    else std::fprintf(stderr, "strata: %s\n", r.error().message.c_str());
    return 1;
  }
  if (asJson) {
    std::printf("%s\n", json::serialize(json::object{{"path", r->path}, {"bytes", r->bytes}, {"threads", r->threads},
                                                      {"segments", r->segments}, {"unreadableBytes", r->unreadable},
                                                      {"heldSeconds", r->heldSeconds}}).c_str());
  } else {
    std::printf("wrote %s: %.1f MB, %zu threads, %zu memory segments; process %ld was held %.3f s and runs on\n",
                r->path.c_str(), static_cast<double>(r->bytes) / 1e6, r->threads, r->segments, pid, r->heldSeconds);
    if (r->unreadable) std::printf("(%llu bytes of mapped memory could not be read: written as zeros)\n", static_cast<unsigned long long>(r->unreadable));
  }
  return 0;
}

int coreCommand(int argc, char** argv, int first) {
  stacks::Options read;
  bool dump = false;
  core::CoreOptions coreOptions;
  bool asJson = false;
  std::string corePath;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") asJson = true;
    else if (a == "--dump") dump = true;
    else if (a == "--native") read.nativeOnly = true;
    else if (a == "--python-only") read.pythonOnly = true;
    else if (a == "--full") read.full = true;
    else if (a == "--locals") read.locals = true;
    else if (a == "--help" || a == "-h") {
      std::printf("%s\n", coreUsage());
      return 0;
    } else if (a == "--max-frames" || a == "--python-layout" || a == "--sysroot") {
      if (i + 1 >= argc) return coreUsageError(a + " needs a value");
      std::string v = argv[++i];
      char* end = nullptr;
      if (a == "--sysroot") {
        coreOptions.sysroot = v;
      } else if (a == "--max-frames") {
        long n = std::strtol(v.c_str(), &end, 10);
        if (n <= 0 || *end != '\0') return coreUsageError("--max-frames needs a positive number, not '" + v + "'");
        read.maxFrames = static_cast<std::size_t>(n);
      } else {
        long minor = v.rfind("3.", 0) == 0 ? std::strtol(v.c_str() + 2, &end, 10) : -1;
        if (minor < 0 || !end || *end != '\0') return coreUsageError("--python-layout needs a version like 3.12, not '" + v + "'");
        read.layoutMinor = static_cast<int>(minor);
      }
    } else if (!a.empty() && a[0] != '-' && corePath.empty()) {
      corePath = a;
    } else if (!a.empty() && a[0] != '-' && coreOptions.program.empty()) {
      coreOptions.program = a;
    } else {
      return coreUsageError("unexpected argument '" + a + "'");
    }
  }
  if (dump) {
    // --dump PID [FILE]: the two positionals are the process and where its core goes.
    if (corePath.empty()) return coreUsageError("--dump needs a process id");
    return dumpCommand(corePath, coreOptions.program, asJson);
  }
  if (corePath.empty()) return coreUsageError("which core file?");
  if (read.nativeOnly && read.pythonOnly) return coreUsageError("--native and --python-only exclude each other");
  json::object out;
  std::string text;
  auto r = stacks::inspectCore(corePath, coreOptions, read, out, text);
  if (!r) {
    if (asJson) std::printf("%s\n", json::serialize(json::object{{"error", r.error().message}}).c_str());
    else std::fprintf(stderr, "strata: %s\n", r.error().message.c_str());
    return 1;
  }
  if (asJson) std::printf("%s\n", json::serialize(out).c_str());
  else std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace strata::cli
