// Bench: issue 4's native scenarios through the NativeDebugger facade (no DAP), min/median of
// several rounds, each round a fresh debugger and process:
//   false-condition hits/s on a hot line (the program times its loop, against a plain run),
//   stops after a pause (the first, then each after a resume) and the 1000th hit of a
//   hit-condition breakpoint: the program's CLOCK_REALTIME stamp → the stopped callback,
//   the first stackTrace page at depth 1000 and paging all,
//   python3.12 launch → first stop on encoder_listencode_list (in _json.so),
//   an unpaged variables request on a 100k std::vector (time and bytes of the answer).
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "strata/native/debugger/debugger.hpp"

using namespace strata::native::debugger;
using strata::native::engine::ExitEvent;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// CPU time of this process (the debugger's threads): what a request costs apart from waiting
// for a loaded machine's cores.
double cpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

template <class T>
T must(std::future<strata::Result<T>>&& f, const char* what) {
  auto r = f.get();
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", what, r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}
void must(std::future<strata::Result<void>>&& f, const char* what) {
  auto r = f.get();
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", what, r.error().message.c_str());
    std::exit(1);
  }
}

int lineOf(const std::string& source, const std::string& marker) {
  std::ifstream in(source);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n)
    if (text.find("// @bp:" + marker) != std::string::npos) return n;
  std::fprintf(stderr, "no marker %s in %s\n", marker.c_str(), source.c_str());
  std::exit(1);
}

struct Stopped {
  DebuggerStop info;
  Clock::time_point at;
  std::chrono::system_clock::time_point wall;  // the debuggee stamps CLOCK_REALTIME
};
using Event = std::variant<Stopped, ExitEvent>;

class Session {
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Event> events_;

 public:
  NativeDebugger debugger;
  Session() : debugger(callbacks()) {}
  Event next() {
    std::unique_lock lock(m_);
    if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return !events_.empty(); })) {
      std::fprintf(stderr, "no event within 60 s\n");
      std::exit(1);
    }
    Event e = events_.front();
    events_.pop_front();
    return e;
  }
  Stopped stop() {
    Event e = next();
    if (auto* s = std::get_if<Stopped>(&e)) return *s;
    std::fprintf(stderr, "expected a stop, the program exited\n");
    std::exit(1);
  }

 private:
  Callbacks callbacks() {
    Callbacks cb;
    cb.stopped = [this](const DebuggerStop& s) { push(Stopped{s, Clock::now(), std::chrono::system_clock::now()}); };
    cb.exited = [this](const ExitEvent& e) { push(e); };
    return cb;
  }
  void push(Event e) {
    std::lock_guard lock(m_);
    events_.push_back(std::move(e));
    cv_.notify_all();
  }
};

struct Stats {
  std::vector<double> values;
  double min() const { return *std::min_element(values.begin(), values.end()); }
  double median() const {
    auto v = values;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }
};

void plainRun(const std::string& program, const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
}

// The loop time the target wrote (hot mode with a file), in seconds.
double loopSeconds(const std::string& file) {
  std::ifstream in(file);
  long long ns = 0;
  if (!(in >> ns)) {
    std::fprintf(stderr, "no loop time in %s\n", file.c_str());
    std::exit(1);
  }
  return ns / 1e9;
}

// Milliseconds from the program's stamp_ns (CLOCK_REALTIME, read at the stop) to the callback.
double stampToStop(Session& s, const Stopped& st) {
  auto v = must(s.debugger.evaluate("stamp_ns", 0), "evaluate");
  long long stamp = std::atoll(v.value.c_str());
  long long at = std::chrono::duration_cast<std::chrono::nanoseconds>(st.wall.time_since_epoch()).count();
  return (at - stamp) / 1e6;
}

bool printValues = false;

void row(const char* name, const Stats& s, const char* unit, double target = 0, bool higherIsBetter = false) {
  std::printf("%-58s min %10.2f  median %10.2f %s", name, higherIsBetter ? *std::max_element(s.values.begin(), s.values.end()) : s.min(),
              s.median(), unit);
  if (target > 0) std::printf("   (target %s %.1f)", higherIsBetter ? ">=" : "<=", target);
  std::printf("\n");
  // Every value, for side_by_side.py, which pools them with the other columns' rounds.
  if (printValues) {
    std::printf("  values:");
    for (double v : s.values) std::printf(" %.6g", v);
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::string python = std::string(std::getenv("HOME") ? std::getenv("HOME") : "/root") +
                       "/.pyenv/versions/3.12.1/bin/python3.12";
  std::string only;
  long hits = 3000;
  std::string pause = "1000";
  int stops = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--hot-hits" && i + 1 < argc) hits = std::atol(argv[++i]);
    else if (a == "--pause-ms" && i + 1 < argc) pause = argv[++i];
    else if (a == "--stops" && i + 1 < argc) stops = std::atoi(argv[++i]);
    else if (a == "--python" && i + 1 < argc) python = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--values") printValues = true;
  }
  const std::string target = STRATA_BENCH_TARGET;
  const std::string source = STRATA_BENCH_TARGET_SRC;
  auto wanted = [&](const char* name) { return only.empty() || only == name; };

  if (wanted("hot")) {
    Stats rate;
    char file[] = "/tmp/strata-bench-loop-XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0) return 1;
    close(fd);
    std::vector<std::string> args{"hot", std::to_string(hits), file};
    for (int r = 0; r < rounds; ++r) {
      plainRun(target, args);
      double plain = loopSeconds(file);
      Session s;
      must(s.debugger.launch({.program = target, .args = args}), "launch");
      must(s.debugger.setSourceBreakpoints(source, {{.line = lineOf(source, "hot"), .condition = "i < 0"}}), "break");
      must(s.debugger.configurationDone(false), "configurationDone");
      if (!std::holds_alternative<ExitEvent>(s.next())) return 1;
      rate.values.push_back(hits / (loopSeconds(file) - plain));
    }
    unlink(file);
    row("false condition on a hot line, hits/s", rate, "hits/s", 20000, true);
  }
  if (wanted("nth")) {
    Stats latency;
    for (int r = 0; r < rounds; ++r) {
      Session s;
      must(s.debugger.launch({.program = target, .args = {"nth", "2000", pause}}), "launch");
      must(s.debugger.setSourceBreakpoints(source, {{.line = lineOf(source, "nth"), .hitCondition = "1000"}}), "break");
      must(s.debugger.configurationDone(false), "configurationDone");
      latency.values.push_back(stampToStop(s, s.stop()));
      must(s.debugger.terminate(), "terminate");
    }
    row("1000th hit -> stopped callback", latency, "ms", 0.6);
  }
  if (wanted("stop")) {
    Stats first, next;
    for (int r = 0; r < rounds; ++r) {
      Session s;
      must(s.debugger.launch({.program = target, .args = {"stops", std::to_string(stops), pause}}), "launch");
      must(s.debugger.setSourceBreakpoints(source, {{.line = lineOf(source, "stop")}}), "break");
      must(s.debugger.configurationDone(false), "configurationDone");
      for (int k = 0; k < stops; ++k) {
        (k == 0 ? first : next).values.push_back(stampToStop(s, s.stop()));
        if (k + 1 < stops) must(s.debugger.resume(), "resume");
      }
      must(s.debugger.terminate(), "terminate");
    }
    row("first stop after the pause -> stopped callback", first, "ms");
    if (!next.values.empty()) row("next stops (resume -> same line) -> stopped callback", next, "ms");
  }
  if (wanted("deep")) {
    Stats first, firstCpu, all, stopMs;
    std::size_t depth = 0;
    for (int r = 0; r < rounds; ++r) {
      Session s;
      must(s.debugger.launch({.program = target, .args = {"deep", "1000"}}), "launch");
      must(s.debugger.setSourceBreakpoints(source, {{.line = lineOf(source, "deep")}}), "break");
      must(s.debugger.configurationDone(false), "configurationDone");
      Stopped st = s.stop();
      auto t0 = Clock::now();
      double c0 = cpuMs();
      auto page = must(s.debugger.stackTrace(st.info.tid, 0, 20), "stackTrace");
      first.values.push_back(msSince(t0));
      firstCpu.values.push_back(cpuMs() - c0);
      t0 = Clock::now();
      std::size_t seen = page.frames.size();
      while (seen < page.totalFrames) {
        auto p = must(s.debugger.stackTrace(st.info.tid, seen, 20), "stackTrace");
        if (p.frames.empty()) break;
        seen += p.frames.size();
      }
      all.values.push_back(msSince(t0));
      depth = page.totalFrames;
      must(s.debugger.terminate(), "terminate");
    }
    std::printf("(stack depth %zu)\n", depth);
    row("stackTrace first page of 20 at depth 1000", first, "ms", 2);
    row("  its CPU time in the debugger", firstCpu, "ms");
    row("stackTrace paging through the rest (20 a page)", all, "ms");
  }
  if (wanted("json")) {
    Stats launch, launchCpu;
    if (access(python.c_str(), X_OK) != 0) {
      std::printf("python launch: %s not found, skipped\n", python.c_str());
    } else {
      for (int r = 0; r < rounds; ++r) {
        Session s;
        auto t0 = Clock::now();
        double c0 = cpuMs();
        must(s.debugger.launch({.program = python, .args = {"-c", "import json;json.dumps([1])"}}), "launch");
        auto bps = must(s.debugger.setFunctionBreakpoints({{.name = "encoder_listencode_list"}}), "break");
        (void)bps;
        must(s.debugger.configurationDone(false), "configurationDone");
        Stopped st = s.stop();
        launch.values.push_back(std::chrono::duration<double, std::milli>(st.at - t0).count());
        launchCpu.values.push_back(cpuMs() - c0);
        auto page = must(s.debugger.stackTrace(st.info.tid, 0, 1), "stackTrace");
        if (page.frames.empty() || page.frames[0].name.find("encoder_listencode_list") == std::string::npos) {
          std::fprintf(stderr, "stopped in %s\n", page.frames.empty() ? "?" : page.frames[0].name.c_str());
          return 1;
        }
        must(s.debugger.terminate(), "terminate");
      }
      row("python3.12 launch -> stop in _json.so", launch, "ms", 150);
      row("  CPU time in the debugger (launch to the stop, and one stackTrace)", launchCpu, "ms");
    }
  }
  if (wanted("vector")) {
    Stats time, bytes, count;
    for (int r = 0; r < rounds; ++r) {
      Session s;
      must(s.debugger.launch({.program = target, .args = {"vector", "100000"}}), "launch");
      must(s.debugger.setSourceBreakpoints(source, {{.line = lineOf(source, "vector")}}), "break");
      must(s.debugger.configurationDone(false), "configurationDone");
      Stopped st = s.stop();
      auto page = must(s.debugger.stackTrace(st.info.tid, 0, 1), "stackTrace");
      auto scopes = must(s.debugger.scopes(page.frames.at(0).id), "scopes");
      int ref = 0;
      for (auto& v : must(s.debugger.variables(scopes.at(0).variablesReference), "variables"))
        if (v.name == "big") ref = v.variablesReference;
      auto t0 = Clock::now();
      auto children = must(s.debugger.variables(ref), "variables");
      time.values.push_back(msSince(t0));
      double size = 0;
      for (auto& c : children) size += c.name.size() + c.value.size() + c.type.size() + c.evaluateName.size() + 60;
      bytes.values.push_back(size / 1024);
      count.values.push_back(static_cast<double>(children.size()));
      must(s.debugger.terminate(), "terminate");
    }
    row("unpaged variables on a 100k std::vector", time, "ms");
    row("  its answer (approximate JSON size)", bytes, "KiB");
    row("  children in it", count, "");
  }
  return 0;
}
