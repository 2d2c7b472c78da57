// Breakpoints from the command line and the printing of stops.
#include "adapter/cli/stops.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "adapter/cli/json_fields.hpp"

namespace strata::cli {

namespace fs = std::filesystem;

namespace {

using namespace fields;

constexpr std::size_t kFramesShown = 5;
// Below those, the Python frames of a mixed stack (the Python line that called the C++ code),
// looked for among this many.
constexpr std::size_t kFramesSearched = 64, kPythonFramesShown = 5;

bool pythonFile(const std::string& file) {
  return file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0;
}
constexpr std::size_t kLocalsShown = 40;
// At a crash, the other threads: this many, each folded to this many frames.
constexpr std::size_t kOtherThreadsShown = 64, kOtherFramesShown = 3;

void print(const StopView& s, bool asJson) {
  std::string text = asJson ? json::serialize(stopJson(s)) + "\n" : stopText(s);
  std::fflush(stdout);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

json::object stopJson(const StopView& s) {
  json::object line{{"type", "stopped"}, {"threadId", s.threadId}, {"thread", s.threadName},
                    {"reason", s.reason}, {"frames", s.frames}, {"locals", s.locals}};
  if (!s.description.empty()) line["description"] = s.description;
  if (!s.session.empty()) line["session"] = s.session;
  if (!s.localsFrame.empty()) line["localsFrame"] = json::object{{"name", s.localsFrame}, {"index", s.localsIndex}};
  if (!s.otherThreads.empty()) line["otherThreads"] = s.otherThreads;
  if (!s.gpu.empty()) line["gpu"] = s.gpu;
  return line;
}

std::string stopText(const StopView& s) {
  std::string out = "-- stopped (" + s.reason + ")";
  if (!s.description.empty() && s.description != s.reason) out += ": " + s.description;
  if (!s.session.empty()) out += " in " + s.session + ",";
  out += " in thread " + std::to_string(s.threadId);
  if (!s.threadName.empty()) out += " \"" + s.threadName + "\"";
  out += "\n";
  std::int64_t previous = -1;
  for (std::size_t i = 0; i < s.frames.size(); ++i) {
    const auto& f = s.frames[i].get_object();
    std::int64_t index = f.contains("index") ? num(f, "index") : static_cast<std::int64_t>(i);
    if (index > previous + 1) out += "   ...\n";
    previous = index;
    out += "   #" + std::to_string(index) + " " + str(f, "name");
    // Frames without source (no debug info) carry module+offset in their name already.
    if (!str(f, "file").empty())
      out += " at " + str(f, "file") + ":" + std::to_string(num(f, "line"));
    out += "\n";
  }
  if (!s.localsInOrder.empty()) {
    // The top frame's, or those of the first frame of the program's own code below library ones.
    if (s.localsFrame.empty() || s.localsIndex == 0) out += "   locals:\n";
    else out += "   locals of " + s.localsFrame + " (#" + std::to_string(s.localsIndex) + "):\n";
  }
  for (const auto& [name, value] : s.localsInOrder) out += "     " + name + " = " + value + "\n";
  if (!s.otherThreads.empty()) out += "   other threads:\n";
  for (const auto& t : s.otherThreads) {
    const auto& to = t.get_object();
    out += "     thread " + std::to_string(num(to, "id"));
    if (!str(to, "name").empty()) out += " \"" + str(to, "name") + "\"";
    std::string sep = ": ";
    for (const auto& f : arr(to, "frames")) {
      const auto& fo = f.get_object();
      out += sep + str(fo, "name");
      if (!str(fo, "file").empty())
        out += " (" + fs::path(str(fo, "file")).filename().string() + ":" + std::to_string(num(fo, "line")) + ")";
      sep = " < ";
    }
    if (num(to, "moreFrames") > 0) out += " < ... " + std::to_string(num(to, "moreFrames")) + " more";
    out += "\n";
  }
  return out;
}

Result<BreakSpec> parseBreak(const std::string& text, const std::string& cwd) {
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0)
    return Error{errors::kBadCommandLine, "--break needs FILE:LINE[:CONDITION], got '" + text + "'", true};
  BreakSpec b;
  b.file = text.substr(0, colon);
  std::string rest = text.substr(colon + 1);
  auto second = rest.find(':');
  std::string line = rest.substr(0, second);
  if (line.empty() || line.find_first_not_of("0123456789") != std::string::npos)
    return Error{errors::kBadCommandLine, "--break needs a line number after the file, got '" + text + "'", true};
  b.line = std::stoll(line);
  if (second != std::string::npos && second + 1 < rest.size()) b.condition = rest.substr(second + 1);
  b.file = (fs::path(cwd) / b.file).lexically_normal().string();
  return b;
}

void setBreakpoints(DapClient& client, const std::vector<BreakSpec>& breaks,
                    std::function<void(const std::string&)> warn, std::function<void()> done) {
  std::map<std::string, json::array> byFile;
  for (const auto& b : breaks) {
    json::object bp{{"line", b.line}};
    if (b.condition) bp["condition"] = *b.condition;
    byFile[b.file].push_back(std::move(bp));
  }
  auto remaining = std::make_shared<std::size_t>(byFile.size());
  auto finish = std::make_shared<std::function<void()>>(std::move(done));
  for (auto& [file, bps] : byFile) {
    json::object args{{"source", json::object{{"path", file}}}, {"breakpoints", bps}};
    client.request("setBreakpoints", std::move(args), [=](const protocol::Response& r) {
      if (!r.success) {
        warn("breakpoints in " + file + " failed: " + r.message.value_or("?"));
      } else {
        for (const auto& b : arr(obj(r.body), "breakpoints")) {
          const auto& bo = obj(b);
          auto* verified = bo.if_contains("verified");
          if (verified && verified->is_bool() && !verified->get_bool()) {
            // A library not loaded yet (an extension imported later): set when it loads.
            if (str(bo, "reason") == "pending")
              warn("breakpoint in " + file + " is pending (set when code for it loads): " + str(bo, "message"));
            else
              warn("breakpoint in " + file + " not set: " + str(bo, "message"));
          }
        }
      }
      if (--*remaining == 0) (*finish)();
    });
  }
  if (byFile.empty()) (*finish)();
}

void reportStopAndContinue(DapClient& client, const json::object& stoppedBody, bool asJson, const std::string& session) {
  DapClient* c = &client;
  std::int64_t threadId = num(stoppedBody, "threadId");
  gatherStop(client, stoppedBody, [c, threadId, asJson, session](std::shared_ptr<StopView> stop) {
    stop->session = session;
    print(*stop, asJson);
    c->request("continue", json::object{{"threadId", threadId}}, [](const protocol::Response&) {});
  });
}

void reportStop(DapClient& client, const json::object& stoppedBody, bool asJson, std::function<void()> then) {
  gatherStop(client, stoppedBody, [asJson, then](std::shared_ptr<StopView> stop) {
    print(*stop, asJson);
    then();
  });
}

void gatherStop(DapClient& client, const json::object& stoppedBody, std::function<void(std::shared_ptr<StopView>)> done) {
  auto stop = std::make_shared<StopView>();
  stop->threadId = num(stoppedBody, "threadId");
  stop->reason = str(stoppedBody, "reason");
  stop->description = str(stoppedBody, "text");
  DapClient* c = &client;
  auto resume = [stop, done] { done(stop); };
  // The stopped thread's frames and locals, once its name is known.
  auto stack = [c, stop, resume] {
    json::object args{{"threadId", stop->threadId}, {"startFrame", 0}, {"levels", kFramesSearched}};
    c->request("stackTrace", std::move(args), [c, stop, resume](const protocol::Response& r) {
      const auto& all = arr(obj(r.body), "stackFrames");
      auto fileOf = [](const json::object& fo) {
        std::string file = str(obj(fo.contains("source") ? fo.at("source") : json::value()), "path");
        return file.empty() ? str(obj(fo.contains("source") ? fo.at("source") : json::value()), "name") : file;
      };
      // A stop in C/C++ code that Python called (mixed mode): its Python callers are shown too.
      bool pythonOnTop = false;
      for (std::size_t i = 0; i < all.size() && i < kFramesShown; ++i) pythonOnTop |= pythonFile(fileOf(obj(all[i])));
      json::array frames;
      std::size_t python = 0;
      for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& fo = obj(all[i]);
        std::string file = fileOf(fo);
        bool shown = i < kFramesShown || (!pythonOnTop && pythonFile(file) && python < kPythonFramesShown);
        if (!shown) continue;
        if (i >= kFramesShown) ++python;
        frames.push_back(all[i]);
        json::object f{{"name", str(fo, "name")}, {"file", file}, {"line", num(fo, "line")}};
        if (i >= kFramesShown) f["index"] = static_cast<std::int64_t>(i);
        stop->frames.push_back(std::move(f));
      }
      if (frames.empty()) return resume();
      // The locals of the innermost frame that is not a subtle one (a C frame under Python's);
      // at a crash, of the program's own frame the diagnosis names ("called from F at X:N").
      std::int64_t frameId = num(obj(frames[0]), "id");
      stop->localsFrame = str(obj(frames[0]), "name");
      std::string calledFrom;
      if (auto at = stop->description.find(", called from "); at != std::string::npos) {
        calledFrom = stop->description.substr(at + 14);
        calledFrom = calledFrom.substr(0, calledFrom.find(" at "));
      }
      // The crash in the program's own code ("... in fpe_fault at x.c:41, called from main"):
      // the locals of that innermost frame.
      const std::size_t ownTop = stop->description.find(" in " + str(obj(frames[0]), "name") + " at ");
      bool named = ownTop != std::string::npos && ownTop < stop->description.find(", called from ");
      if (named) calledFrom.clear();
      for (std::size_t i = 0; i < frames.size() && !calledFrom.empty(); ++i)
        if (str(obj(frames[i]), "name") == calledFrom) {
          frameId = num(obj(frames[i]), "id");
          stop->localsFrame = calledFrom;
          const auto& kept = obj(stop->frames[i]);
          stop->localsIndex = kept.contains("index") ? num(kept, "index") : static_cast<std::int64_t>(i);
          named = true;
          break;
        }
      for (std::size_t i = 0; i < frames.size() && !named; ++i)
        if (str(obj(frames[i]), "presentationHint") != "subtle") {
          frameId = num(obj(frames[i]), "id");
          stop->localsFrame = str(obj(frames[i]), "name");
          // Where the frame is in the stack (the frames kept are not all of them).
          const auto& kept = obj(stop->frames[i]);
          stop->localsIndex = kept.contains("index") ? num(kept, "index") : static_cast<std::int64_t>(i);
          break;
        }
      c->request("scopes", json::object{{"frameId", frameId}}, [c, stop, resume](const protocol::Response& r) {
        const auto& scopes = arr(obj(r.body), "scopes");
        if (scopes.empty()) return resume();
        std::int64_t ref = num(obj(scopes[0]), "variablesReference");
        json::object args{{"variablesReference", ref}, {"start", 0}, {"count", kLocalsShown}};
        c->request("variables", std::move(args), [stop, resume](const protocol::Response& r) {
          for (const auto& v : arr(obj(r.body), "variables")) {
            std::string name = str(obj(v), "name"), value = str(obj(v), "value");
            stop->locals[name] = value;
            stop->localsInOrder.emplace_back(name, value);
          }
          resume();
        });
      });
    });
  };
  auto frames = [c, stop, stack] {
    c->request("threads", nullptr, [stop, stack](const protocol::Response& r) {
      for (const auto& t : arr(obj(r.body), "threads"))
        if (num(obj(t), "id") == stop->threadId) stop->threadName = str(obj(t), "name");
      stack();
    });
  };
  // A fatal signal: the adapter's one-line diagnosis (where, and the program's frame that led
  // there) says more than the stop's description; the other threads are shown folded.
  if (stop->reason != "exception" || str(stoppedBody, "text").rfind("SIG", 0) != 0) return frames();
  // One threads request names the stopped thread and lists the others.
  auto others = [c, stop, stack] {
    c->request("threads", nullptr, [c, stop, stack](const protocol::Response& r) {
      auto left = std::make_shared<std::size_t>(0);
      std::vector<std::pair<std::int64_t, std::string>> list;
      for (const auto& t : arr(obj(r.body), "threads")) {
        if (num(obj(t), "id") == stop->threadId) stop->threadName = str(obj(t), "name");
        else list.emplace_back(num(obj(t), "id"), str(obj(t), "name"));
      }
      if (list.size() > kOtherThreadsShown) list.resize(kOtherThreadsShown);
      *left = list.size();
      if (list.empty()) return stack();
      auto slots = std::make_shared<std::vector<json::object>>(list.size());
      for (std::size_t k = 0; k < list.size(); ++k) {
        auto [id, name] = list[k];
        json::object args{{"threadId", id}, {"startFrame", 0}, {"levels", kFramesSearched}};
        c->request("stackTrace", std::move(args), [stop, stack, left, slots, k, id, name](const protocol::Response& r) {
          json::array top;
          const auto& all = arr(obj(r.body), "stackFrames");
          // Its innermost frames with a source (those it waits or runs in), up to three.
          for (const auto& f : all) {
            const auto& fo = obj(f);
            static const json::value none;
            const auto& src = obj(fo.contains("source") ? fo.at("source") : none);
            if (str(src, "path").empty() && top.empty() && &f != &all.back()) continue;
            top.push_back(json::object{{"name", str(fo, "name")}, {"file", str(src, "path")}, {"line", num(fo, "line")}});
            if (top.size() == kOtherFramesShown) break;
          }
          if (top.empty() && !all.empty()) top.push_back(json::object{{"name", str(obj(all[0]), "name")}});
          std::int64_t total = num(obj(r.body), "totalFrames");
          if (!total) total = static_cast<std::int64_t>(all.size());
          (*slots)[k] = json::object{{"id", id}, {"name", name}, {"frames", std::move(top)},
                                     {"moreFrames", std::max<std::int64_t>(0, total - kOtherFramesShown)}};
          if (--*left == 0) {
            for (auto& o : *slots) stop->otherThreads.push_back(std::move(o));
            stack();
          }
        });
      }
    });
  };
  // What the GPU was doing, when the session collected any.
  auto gpu = [c, stop, others] {
    c->request("evaluate", json::object{{"expression", "!gpu crash"}, {"context", "repl"}}, [stop, others](const protocol::Response& r) {
      if (r.success && str(obj(r.body), "result").rfind("GPU at the crash", 0) == 0) stop->gpu = str(obj(r.body), "result");
      others();
    });
  };
  c->request("exceptionInfo", json::object{{"threadId", stop->threadId}}, [stop, gpu](const protocol::Response& r) {
    if (r.success && !str(obj(r.body), "description").empty()) stop->description = str(obj(r.body), "description");
    gpu();
  });
}

}  // namespace strata::cli
