// Attach to a running process: read and write its memory, detach, and it finishes normally.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>

#include "support.hpp"

using namespace strata::native::engine;
using namespace strata::native::engine::testing;

namespace {

struct Spinner {
  Capture out;
  pid_t pid = -1;
  explicit Spinner(int extraThreads = 0) {
    std::string extra = std::to_string(extraThreads);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(out.writeEnd(), 1);
      execl(SPIN_PATH, SPIN_PATH, extra.c_str(), nullptr);
      _exit(127);
    }
    close(out.fds[1]);
    out.fds[1] = -1;
    std::string ready;
    char c;
    while (ready.size() < 6 && read(out.fds[0], &c, 1) == 1) ready += c;
    REQUIRE(ready == "ready\n");
  }
  ~Spinner() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // Exit code and the rest of its output, once it ends.
  std::pair<int, std::string> finish() {
    std::string rest = out.readAll();
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    pid = -1;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, rest};
  }
};

std::uint64_t symbolIn(RecordingSink& sink, const char* symbol) {
  auto exe = sink.object("/engine_target_spin");
  REQUIRE(exe.has_value());
  return exe->loadBias + ok(elfSymbol(SPIN_PATH, symbol));
}

}  // namespace

TEST_CASE("attach, read memory, break, detach: the program runs on and exits normally") {
  Spinner spin;
  RecordingSink sink;
  Engine engine(sink);
  ok(engine.attach(spin.pid));
  EngineStop attached = sink.stop();
  CHECK(attached.reason == EngineStopReason::Attach);
  CHECK(attached.pid == spin.pid);
  CHECK(sink.object("/libc.so.6").has_value());
  auto threads = ok(engine.threads());
  REQUIRE(threads.size() == 1);
  CHECK(threads[0].name == "engine_target_s");
  unsigned long magic = 0;
  ok(engine.memory().read(symbolIn(sink, "magic"), &magic, sizeof magic));
  CHECK(magic == 0x5354524154410001ul);

  std::uint64_t spinOnce = symbolIn(sink, "spin_once");
  std::uint8_t original = 0;
  ok(engine.memory().read(spinOnce, &original, 1));
  ok(engine.addBreakpoint(spinOnce));
  ok(engine.resume());
  EngineStop hit = sink.stop();
  REQUIRE(hit.reason == EngineStopReason::Breakpoint);
  CHECK(hit.pc == spinOnce);
  ok(engine.detach());
  CHECK(engine.pid() == 0);

  // Detached and still spinning: the breakpoint byte is gone from its memory.
  int mem = open(("/proc/" + std::to_string(spin.pid) + "/mem").c_str(), O_RDWR);
  REQUIRE(mem >= 0);
  std::uint8_t now = 0;
  REQUIRE(pread(mem, &now, 1, static_cast<off_t>(spinOnce)) == 1);
  CHECK(now == original);
  CHECK(now != 0xCC);
  int stop = 0;
  REQUIRE(pwrite(mem, &stop, sizeof stop, static_cast<off_t>(symbolIn(sink, "keep_running"))) == sizeof stop);
  close(mem);
  auto [code, rest] = spin.finish();
  CHECK(code == 0);
  CHECK(rest == "spin done\n");
}

TEST_CASE("attach seizes every thread of a multithreaded process; detach lets all of them run on") {
  Spinner spin(4);
  RecordingSink sink;
  Engine engine(sink);
  ok(engine.attach(spin.pid));
  CHECK(sink.stop().reason == EngineStopReason::Attach);
  auto threads = ok(engine.threads());
  REQUIRE(threads.size() == 5);
  for (auto& t : threads) {
    std::ifstream stat("/proc/" + std::to_string(spin.pid) + "/task/" + std::to_string(t.tid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    CHECK_MESSAGE(text[text.rfind(')') + 2] == 't', "thread " << t.tid);
  }
  unsigned long before = 0, after = 0;
  std::uint64_t loops = symbolIn(sink, "loops");
  ok(engine.memory().read(loops, &before, sizeof before));
  ok(engine.memory().read(loops, &after, sizeof after));
  CHECK(before == after);  // nobody runs while all-stopped
  // Every thread hits spin_once; resuming repeatedly must spread the hits over all of them.
  std::uint64_t spinOnce = symbolIn(sink, "spin_once");
  BreakpointId id = ok(engine.addBreakpoint(spinOnce));
  std::set<pid_t> hitters;
  for (int i = 0; i < 60 && hitters.size() < 5; ++i) {
    ok(engine.resume());
    EngineStop hit = sink.stop();
    REQUIRE(hit.reason == EngineStopReason::Breakpoint);
    CHECK(hit.pc == spinOnce);
    hitters.insert(hit.tid);
  }
  CHECK(hitters.size() == 5);
  ok(engine.removeBreakpoint(id));
  int zero = 0;
  ok(engine.memory().write(symbolIn(sink, "keep_running"), &zero, sizeof zero));
  ok(engine.detach());
  auto [code, rest] = spin.finish();
  CHECK(code == 0);
  CHECK(rest == "spin done\n");
}

TEST_CASE("destroying the engine while the attached program runs detaches it cleanly") {
  Spinner spin(2);
  std::uint64_t spinOnce = 0, keepRunning = 0;
  std::atomic<int> hits{0};
  {
    RecordingSink sink;
    Engine engine(sink);
    ok(engine.attach(spin.pid));
    sink.stop();
    spinOnce = symbolIn(sink, "spin_once");
    keepRunning = symbolIn(sink, "keep_running");
    ok(engine.addBreakpoint(spinOnce, [&](const HitContext&) {
      ++hits;
      return false;
    }));
    ok(engine.addBreakpoint(spinOnce + 4));  // stepped over by single-step on every hit
    ok(engine.resume());
    for (int i = 0; i < 3; ++i) {
      REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);
      ok(engine.resume());
    }
  }  // running, with breakpoints inserted: the destructor stops, cleans up and detaches
  CHECK(hits >= 3);
  int mem = open(("/proc/" + std::to_string(spin.pid) + "/mem").c_str(), O_RDWR);
  REQUIRE(mem >= 0);
  std::uint8_t code[5] = {};
  REQUIRE(pread(mem, code, sizeof code, static_cast<off_t>(spinOnce)) == sizeof code);
  CHECK(code[0] == 0x55);  // push %rbp
  CHECK(code[4] != 0xCC);
  int zero = 0;
  REQUIRE(pwrite(mem, &zero, sizeof zero, static_cast<off_t>(keepRunning)) == sizeof zero);
  close(mem);
  auto [code2, rest] = spin.finish();
  CHECK(code2 == 0);
  CHECK(rest == "spin done\n");
}

TEST_CASE("attach refusals say why") {
  RecordingSink sink;
  Engine engine(sink);
  SUBCASE("no such process") {
    pid_t gone = fork();
    if (gone == 0) _exit(0);
    waitpid(gone, nullptr, 0);
    auto r = engine.attach(gone).get();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "attach to process " + std::to_string(gone) + ": no such process");
  }
  SUBCASE("already traced") {
    Spinner spin;
    RecordingSink otherSink;
    Engine other(otherSink);
    ok(other.attach(spin.pid));
    otherSink.stop();
    auto r = engine.attach(spin.pid).get();
    REQUIRE_FALSE(r.ok());
    INFO(r.error().message);
    CHECK(r.error().message.find("it is already traced by process " + std::to_string(getpid())) !=
          std::string::npos);
    ok(other.detach());
  }
}

TEST_CASE("memory written through the engine changes the program's behaviour") {
  Spinner spin;
  RecordingSink sink;
  Engine engine(sink);
  ok(engine.attach(spin.pid));
  sink.stop();
  int zero = 0;
  ok(engine.memory().write(symbolIn(sink, "keep_running"), &zero, sizeof zero));
  ok(engine.detach());
  auto [code, rest] = spin.finish();
  CHECK(code == 0);
  CHECK(rest == "spin done\n");
}
