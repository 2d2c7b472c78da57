// `strata stacks PID`: attaches with NativeDebugger, prints every thread's stack, detaches.
#include "adapter/cli/stacks.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <boost/json.hpp>

#include "strata/native/debugger/debugger.hpp"
#include "strata/hex.hpp"

namespace strata::cli {

namespace {

namespace json = boost::json;
using namespace strata::native::debugger;

constexpr std::size_t kMaxFrames = 1024;  // a runaway recursion still prints in bounded size

int fail(bool asJson, const std::string& message) {
  if (asJson) {
    std::printf("%s\n", json::serialize(json::object{{"error", message}}).c_str());
  } else {
    std::fprintf(stderr, "strata: %s\n", message.c_str());
  }
  return 1;
}

}  // namespace

int stacksCommand(int argc, char** argv, int first) {
  bool asJson = false;
  std::string pidText;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") asJson = true;
    else if (pidText.empty() && !a.empty() && a[0] != '-') pidText = a;
    else {
      std::fprintf(stderr, "strata: stacks: unexpected argument '%s'\nusage: strata stacks [--json] PID\n", a.c_str());
      return 2;
    }
  }
  char* end = nullptr;
  long pid = pidText.empty() ? 0 : std::strtol(pidText.c_str(), &end, 10);
  if (pid <= 0 || *end != '\0') {
    std::fprintf(stderr, "strata: stacks needs a process id: strata stacks [--json] PID\n");
    return 2;
  }

  NativeDebugger debugger(Callbacks{});
  if (auto r = debugger.attach(static_cast<pid_t>(pid)).get(); !r) return fail(asJson, r.error().message);
  auto threads = debugger.threads().get();
  if (!threads) {
    (void)debugger.detach().get();
    return fail(asJson, "stacks: list threads: " + threads.error().message);
  }
  json::array threadList;
  std::string text = "process " + std::to_string(pid) + ": " + std::to_string(threads->size()) + " threads\n";
  for (const auto& t : *threads) {
    auto page = debugger.stackTrace(t.tid, 0, kMaxFrames).get();
    json::object thread{{"id", t.tid}, {"name", t.name}};
    text += "\nthread " + std::to_string(t.tid) + " \"" + t.name + "\"\n";
    if (!page) {
      thread["error"] = page.error().message;
      text += "  (no stack: " + page.error().message + ")\n";
      threadList.push_back(std::move(thread));
      continue;
    }
    json::array frames;
    for (std::size_t i = 0; i < page->frames.size(); ++i) {
      const auto& f = page->frames[i];
      json::object frame{{"index", i}, {"function", f.name}, {"module", f.module}, {"offset", hexAddress(f.moduleOffset)},
                         {"pc", hexAddress(f.pc)}};
      text += "  #" + std::to_string(i) + " ";
      if (!f.file.empty()) {
        frame["file"] = f.file;
        frame["line"] = f.line;
        text += f.name + " (" + f.file + ":" + std::to_string(f.line) + ")";
      } else {
        text += f.module + "+" + hexAddress(f.moduleOffset);
        if (!f.name.empty()) text += "  " + f.name;
      }
      if (f.inlined) {
        frame["inlined"] = true;
        text += " [inlined]";
      }
      text += "\n";
      frames.push_back(std::move(frame));
    }
    thread["totalFrames"] = page->totalFrames;
    thread["frames"] = std::move(frames);
    threadList.push_back(std::move(thread));
  }
  // Detach before printing: the process is held only as long as the unwinding takes.
  if (auto r = debugger.detach().get(); !r) return fail(asJson, "stacks: detach: " + r.error().message);
  if (asJson) {
    json::object out{{"pid", pid}, {"threads", std::move(threadList)}};
    std::printf("%s\n", json::serialize(out).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  return 0;
}

}  // namespace strata::cli
