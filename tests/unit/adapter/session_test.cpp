// The session over a real socket pair, with a fake backend: lifecycle rules, routing, events.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adapter/session.hpp"
#include "strata/protocol/framing.hpp"

using namespace strata;
namespace json = boost::json;

namespace {

// What the fake backend saw; owned by the test, since the session destroys its backend
// when the connection closes.
struct FakeState {
  std::optional<backends::LaunchSpec> launched;
  bool configured = false, detached = false;
  int terminated = 0;
  std::string lastPath;
  // With `stacks`, stack traces are answered by the test through `heldStacks`.
  bool stacks = false;
  std::vector<backends::Reply<backends::StackPage>> heldStacks;
};

class FakeBackend final : public backends::Backend {
 public:
  FakeBackend(backends::BackendHost& host, FakeState& state)
      : host(host), launched(state.launched), configured(state.configured),
        detached(state.detached), terminated(state.terminated), lastPath(state.lastPath), state(state) {}
  std::string name() const override { return "fake"; }
  void launch(const backends::LaunchSpec& spec, backends::Reply<void> reply) override {
    launched = spec;
    reply({});
    host.processStarted("fake", 4242, true);
  }
  void configurationDone(backends::Reply<void> reply) override {
    configured = true;
    reply({});
  }
  void setBreakpoints(const backends::BreakpointSet& set,
                      backends::Reply<std::vector<backends::BreakpointReport>> reply) override {
    if (set.kind != backends::BreakpointSet::Kind::Source) return unsupported(set, reply);
    lastPath = set.path;
    std::vector<backends::BreakpointReport> out;
    for (const auto& b : set.sources) out.push_back({true, b.line + 1, "", {}, {}});
    reply(std::move(out));
  }
  void threads(backends::Reply<std::vector<backends::ThreadInfo>> reply) override {
    reply(std::vector<backends::ThreadInfo>{{11, "main"}, {12, "worker"}});
  }
  void terminate(bool force, backends::Reply<void> reply) override {
    terminated = force ? 2 : 1;
    host.exited(backends::ExitStatus{0, 9});
    reply({});
  }
  void detach(backends::Reply<void> reply) override {
    detached = true;
    reply({});
  }
  void resume(std::int64_t, bool, backends::Reply<bool> reply) override { reply(true); }
  void modules(backends::Reply<std::vector<backends::ModuleInfo>> reply) override {
    reply(std::vector<backends::ModuleInfo>{{"1", "prog", "", "", ""}, {"2", "libc.so.6", "", "", ""},
                                            {"3", "libm.so.6", "", "", ""}});
  }
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                  backends::Reply<backends::StackPage> reply) override {
    if (!state.stacks) return Backend::stackTrace(threadId, startFrame, levels, reply);
    state.heldStacks.push_back(std::move(reply));
  }
  backends::BackendHost& host;
  std::optional<backends::LaunchSpec>& launched;
  bool& configured;
  bool& detached;
  int& terminated;
  std::string& lastPath;
  FakeState& state;
};

struct Harness {
  boost::asio::io_context io;
  int peer = -1;
  std::shared_ptr<adapter::Session> session;
  FakeState state;
  FakeState* fake = nullptr;
  bool ended = false;
  protocol::FrameDecoder decoder;
  int seq = 1;

  Harness() {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    peer = sv[0];
    auto conn = std::make_shared<protocol::Connection>(
        protocol::makeDescriptorStream(io, sv[1], ::dup(sv[1]), "test"));
    adapter::SessionOptions options;
    options.backendFactory.launch = [this](adapter::Session&, backends::BackendHost& host, const backends::LaunchSpec&) {
      fake = &state;
      return std::make_unique<FakeBackend>(host, state);
    };
    options.backendFactory.attach = [this](adapter::Session&, backends::BackendHost& host, const backends::AttachSpec&) {
      fake = &state;
      return std::make_unique<FakeBackend>(host, state);
    };
    session = std::make_shared<adapter::Session>(io, conn, options, [this] { ended = true; });
    session->start();
  }
  ~Harness() {
    if (peer >= 0) ::close(peer);
    io.run_for(std::chrono::milliseconds(50));
  }
  void send(const std::string& command, json::value args = nullptr) {
    json::object o{{"seq", seq++}, {"type", "request"}, {"command", command}};
    if (!args.is_null()) o["arguments"] = args;
    sendRaw(protocol::encodeFrame(json::serialize(o)));
  }
  void sendRaw(const std::string& bytes) { REQUIRE(::write(peer, bytes.data(), bytes.size()) == (ssize_t)bytes.size()); }
  // Runs the adapter until `n` messages arrived.
  std::vector<json::object> receive(std::size_t n) {
    std::vector<json::object> out;
    for (int i = 0; i < 200 && out.size() < n; ++i) {
      io.run_for(std::chrono::milliseconds(5));
      char buf[65536];
      ssize_t r = ::recv(peer, buf, sizeof buf, MSG_DONTWAIT);
      if (r > 0) decoder.feed(std::string_view(buf, r));
      std::string body;
      while (decoder.next(body) == protocol::FrameDecoder::Status::Frame) out.push_back(json::parse(body).as_object());
    }
    REQUIRE(out.size() == n);
    return out;
  }
};

std::string kind(const json::object& m) {
  if (m.at("type") == "event") return "event:" + std::string(m.at("event").as_string());
  return std::string(m.at("type").as_string()) + ":" + std::string(m.at("command").as_string()) +
         (m.at("type") == "response" && !m.at("success").as_bool() ? ":fail" : "");
}

}  // namespace

TEST_CASE("initialize first, once; unknown commands fail; the session survives") {
  Harness h;
  h.send("launch", json::object{{"program", "/bin/true"}});
  auto r = h.receive(1);
  CHECK(kind(r[0]) == "response:launch:fail");
  CHECK(r[0].at("message") == "the first request must be 'initialize' (got 'launch')");
  CHECK(r[0].at("request_seq") == 1);
  h.send("initialize", json::object{{"adapterID", "strata"}});
  r = h.receive(1);
  CHECK(kind(r[0]) == "response:initialize");  // `initialized` waits for launch or attach
  CHECK(r[0].at("body").at("supportsConfigurationDoneRequest") == true);
  h.send("initialize");
  CHECK(h.receive(1)[0].at("message") == "the session is already initialized");
  h.send("stepBack");
  CHECK(h.receive(1)[0].at("message") == "Strata does not support the 'stepBack' request");
}

TEST_CASE("launch goes to the backend; its events and answers reach the client") {
  Harness h;
  h.send("initialize");
  h.receive(1);
  h.send("launch", json::object{{"program", "/bin/true"}, {"args", json::array{"x"}}, {"noDebug", true}});
  auto r = h.receive(3);
  CHECK(kind(r[0]) == "response:launch");
  CHECK(kind(r[1]) == "event:initialized");  // the fake brings no capabilities: no event for them
  CHECK(kind(r[2]) == "event:process");
  CHECK(r[2].at("body").at("systemProcessId") == 4242);
  REQUIRE(h.fake);
  CHECK(h.fake->launched->argv == std::vector<std::string>{"/bin/true", "x"});
  h.send("setBreakpoints", json::object{{"source", json::object{{"path", "/a.c"}}},
                                        {"breakpoints", json::array{json::object{{"line", 4}}}}});
  r = h.receive(1);
  CHECK(r[0].at("body").at("breakpoints").at(0).at("line") == 5);
  CHECK(r[0].at("body").at("breakpoints").at(0).at("verified") == true);
  CHECK(h.fake->lastPath == "/a.c");
  h.send("configurationDone");
  h.receive(1);
  CHECK(h.fake->configured);
  h.send("threads");
  r = h.receive(1);
  CHECK(json::serialize(r[0].at("body")) == R"({"threads":[{"id":11,"name":"main"},{"id":12,"name":"worker"}]})");
  h.send("disconnect");
  r = h.receive(4);
  CHECK(kind(r[0]) == "event:output");
  CHECK(r[0].at("body").at("output") == "Process terminated by signal 9 (SIGKILL)\n");
  CHECK(kind(r[1]) == "event:exited");
  CHECK(kind(r[2]) == "event:terminated");
  CHECK(kind(r[3]) == "response:disconnect");
  CHECK(h.fake->terminated == 2);
}

TEST_CASE("breakpoints set before launch are kept, then placed under the ids first given") {
  Harness h;
  h.send("initialize");
  h.receive(1);
  h.send("setBreakpoints", json::object{{"source", json::object{{"path", "/a.c"}}},
                                        {"breakpoints", json::array{json::object{{"line", 4}}}}});
  auto r = h.receive(1);
  auto early = r[0].at("body").at("breakpoints").at(0);
  CHECK(early.at("verified") == false);
  CHECK(early.at("reason") == "pending");
  CHECK(early.at("line") == 4);
  std::int64_t id = early.at("id").as_int64();
  h.send("launch", json::object{{"program", "/bin/true"}, {"noDebug", true}});
  r = h.receive(4);
  CHECK(kind(r[0]) == "response:launch");
  CHECK(kind(r[1]) == "event:initialized");
  CHECK(kind(r[2]) == "event:process");
  REQUIRE(kind(r[3]) == "event:breakpoint");
  auto placed = r[3].at("body");
  CHECK(placed.at("reason") == "changed");
  CHECK(placed.at("breakpoint").at("id") == id);
  CHECK(placed.at("breakpoint").at("verified") == true);
  CHECK(placed.at("breakpoint").at("line") == 5);
  CHECK(placed.at("breakpoint").at("source").at("path") == "/a.c");
  REQUIRE(h.fake);
  CHECK(h.fake->lastPath == "/a.c");
  h.send("disconnect");
  h.receive(4);
}

TEST_CASE("disconnect with terminateDebuggee:false detaches") {
  Harness h;
  h.send("initialize");
  h.receive(1);
  h.send("launch", json::object{{"program", "/bin/true"}});
  auto r = h.receive(3);
  CHECK(kind(r[0]) == "response:launch");
  CHECK(kind(r[2]) == "event:process");
  h.send("disconnect", json::object{{"terminateDebuggee", false}});
  CHECK(kind(h.receive(1)[0]) == "response:disconnect");
  CHECK(h.fake->detached);
  CHECK(h.fake->terminated == 0);
}

TEST_CASE("a malformed message before initialize closes quietly; after it, an output event") {
  {
    Harness h;
    h.sendRaw(protocol::encodeFrame("not json"));
    for (int i = 0; i < 50 && !h.ended; ++i) h.io.run_for(std::chrono::milliseconds(5));
    CHECK(h.ended);
  }
  Harness h;
  h.send("initialize");
  h.receive(1);
  h.sendRaw(protocol::encodeFrame("{\"seq\":2,"));
  auto r = h.receive(1);
  CHECK(kind(r[0]) == "event:output");
  CHECK(std::string(r[0].at("body").at("output").as_string()).find("malformed JSON") != std::string::npos);
}

TEST_CASE("debugging requests a backend lacks answer 'not supported'; stale ids are refused") {
  Harness h;
  h.send("initialize");
  h.receive(1);
  h.send("stackTrace", json::object{{"threadId", 11}});
  auto r = h.receive(1);
  CHECK(kind(r[0]) == "response:stackTrace:fail");
  CHECK(r[0].at("message") == "there is no debuggee (launch or attach first)");
  h.send("launch", json::object{{"program", "/bin/true"}, {"noDebug", true}});
  r = h.receive(3);
  CHECK(kind(r[1]) == "event:initialized");  // the fake brings no capabilities: no event for them
  CHECK(kind(r[2]) == "event:process");
  h.send("stackTrace", json::object{{"threadId", 11}});
  r = h.receive(1);
  CHECK(kind(r[0]) == "response:stackTrace:fail");
  CHECK(r[0].at("message") == "the fake backend does not support stack traces");
  h.send("scopes", json::object{{"frameId", 77}});
  r = h.receive(1);
  CHECK(r[0].at("message") == "unknown frameId 77 (ids are valid only until the program runs again)");
  h.send("variables", json::object{{"variablesReference", "x"}});
  r = h.receive(1);
  CHECK(kind(r[0]) == "response:variables:fail");
  h.send("setExceptionBreakpoints", json::object{{"filters", json::array{"bogus"}}});
  r = h.receive(1);
  CHECK(r[0].at("message") ==
        "unknown exception filter 'bogus' (the fake backend has none)");
  h.send("disconnect");
  h.receive(4);
}

TEST_CASE("a stack trace answered after the program ran again hands out no frame ids") {
  // A slow backend, a client that presses continue before the frames arrived: those frames
  // are from a stop that is over, and the backend may reuse their ids for the next one.
  Harness h;
  h.state.stacks = true;
  h.send("initialize");
  h.receive(1);
  h.send("launch", json::object{{"program", "/bin/true"}});
  h.receive(3);  // the response, initialized, process
  h.send("stackTrace", json::object{{"threadId", 11}});
  h.send("continue", json::object{{"threadId", 11}});
  auto r = h.receive(1);
  CHECK(kind(r[0]) == "response:continue");
  REQUIRE(h.state.heldStacks.size() == 1);
  backends::StackPage page;
  page.frames.push_back(backends::FrameInfo{7, "main", 0, std::nullopt, 3, 1, "", "", ""});
  h.state.heldStacks[0](page);
  r = h.receive(1);
  CHECK(kind(r[0]) == "response:stackTrace:fail");
  CHECK(r[0].at("message") == "the program ran again before the stack trace arrived; ask again when it stops");
  h.send("scopes", json::object{{"frameId", 1}});
  r = h.receive(1);
  CHECK(r[0].at("message") == "unknown frameId 1 (ids are valid only until the program runs again)");
  // Asked and answered within one stop, the frames are handed out as before.
  backends::StopReport stop;
  stop.reason = "breakpoint";
  stop.threadId = 11;
  h.session->stopped(h.session->backend(), stop);
  CHECK(kind(h.receive(1)[0]) == "event:stopped");
  h.send("stackTrace", json::object{{"threadId", 11}});
  for (int i = 0; i < 200 && h.state.heldStacks.size() < 2; ++i) h.io.run_for(std::chrono::milliseconds(5));
  REQUIRE(h.state.heldStacks.size() == 2);
  h.state.heldStacks[1](page);
  r = h.receive(1);
  CHECK(kind(r[0]) == "response:stackTrace");
  CHECK(r[0].at("body").at("stackFrames").at(0).at("name") == "main");
  h.send("disconnect");
  h.receive(4);
}

TEST_CASE("a thread's frame ids outlive the stops and runs of other threads, not its own") {
  // A job whose processes stop one by one (stopAll false): rank 1 stopping anew, or running,
  // leaves rank 0's frames as the client shows them.
  Harness h;
  h.state.stacks = true;
  h.send("initialize");
  h.receive(1);
  h.send("launch", json::object{{"program", "/bin/true"}});
  h.receive(3);  // the response, initialized, process
  auto stop = [&h](std::int64_t thread, bool all) {
    backends::StopReport s;
    s.reason = "breakpoint";
    s.threadId = thread;
    s.allThreadsStopped = all;
    h.session->stopped(h.session->backend(), s);
    CHECK(kind(h.receive(1)[0]) == "event:stopped");
  };
  auto frameOf = [&h](std::int64_t thread, std::int64_t local) {
    h.send("stackTrace", json::object{{"threadId", thread}});
    std::size_t n = h.state.heldStacks.size() + 1;
    for (int i = 0; i < 200 && h.state.heldStacks.size() < n; ++i) h.io.run_for(std::chrono::milliseconds(5));
    REQUIRE(h.state.heldStacks.size() == n);
    backends::StackPage page;
    page.frames.push_back(backends::FrameInfo{local, "work", 0, std::nullopt, 3, 1, "", "", ""});
    h.state.heldStacks.back()(page);
    auto r = h.receive(1);
    REQUIRE(kind(r[0]) == "response:stackTrace");
    return r[0].at("body").at("stackFrames").at(0).at("id").as_int64();
  };
  auto scopes = [&h](std::int64_t frameId) {
    h.send("scopes", json::object{{"frameId", frameId}});
    return std::string(h.receive(1)[0].at("message").as_string());
  };
  const std::string known = "the fake backend does not support scopes";
  stop(11, false);
  stop(12, false);
  auto a = frameOf(11, 7), b = frameOf(12, 8);
  CHECK(scopes(a) == known);
  CHECK(scopes(b) == known);
  stop(12, false);  // thread 12 ran and stopped again: only its ids go
  CHECK(scopes(a) == known);
  CHECK(scopes(b) == "unknown frameId " + std::to_string(b) + " (ids are valid only until the program runs again)");
  h.session->continued(h.session->backend(), 12, false);
  CHECK(kind(h.receive(1)[0]) == "event:continued");
  CHECK(scopes(a) == known);
  h.session->continued(h.session->backend(), 11, false);
  CHECK(kind(h.receive(1)[0]) == "event:continued");
  CHECK(scopes(a) == "unknown frameId " + std::to_string(a) + " (ids are valid only until the program runs again)");
  // A stop of every thread voids every id.
  stop(11, false);
  auto c = frameOf(11, 9);
  stop(12, true);
  CHECK(scopes(c) == "unknown frameId " + std::to_string(c) + " (ids are valid only until the program runs again)");
  h.send("disconnect");
  h.receive(4);
}

// A part of a composite backend (a rank's backend, one layer of mixed mode): it answers the
// scopes of the frames it owns.
class PartBackend final : public backends::Backend {
 public:
  std::string name() const override { return "part"; }
  void launch(const backends::LaunchSpec&, backends::Reply<void> reply) override { reply({}); }
  void configurationDone(backends::Reply<void> reply) override { reply({}); }
  void setBreakpoints(const backends::BreakpointSet&, backends::Reply<std::vector<backends::BreakpointReport>> reply) override {
    reply(std::vector<backends::BreakpointReport>{});
  }
  void threads(backends::Reply<std::vector<backends::ThreadInfo>> reply) override { reply(std::vector<backends::ThreadInfo>{}); }
  void terminate(bool, backends::Reply<void> reply) override { reply({}); }
  void detach(backends::Reply<void> reply) override { reply({}); }
  void scopes(std::int64_t frameId, backends::Reply<std::vector<backends::ScopeInfo>> reply) override {
    backends::ScopeInfo s;
    s.name = "part's frame " + std::to_string(frameId);
    reply(std::vector<backends::ScopeInfo>{s});
  }
};

TEST_CASE("a composite's frames go to the part that owns them, until the part is gone") {
  Harness h;
  h.state.stacks = true;
  h.send("initialize");
  h.receive(1);
  h.send("launch", json::object{{"program", "/bin/true"}});
  h.receive(3);
  PartBackend part;
  h.session->partAdded(&part);
  backends::StopReport s;
  s.reason = "breakpoint";
  s.threadId = 11;
  h.session->stopped(h.session->backend(), s);
  h.receive(1);
  h.send("stackTrace", json::object{{"threadId", 11}});
  for (int i = 0; i < 200 && h.state.heldStacks.empty(); ++i) h.io.run_for(std::chrono::milliseconds(5));
  REQUIRE(h.state.heldStacks.size() == 1);
  backends::StackPage page;
  backends::FrameInfo mine{7, "the composite's", 0, std::nullopt, 3, 1, "", "", ""};
  backends::FrameInfo theirs{7, "the part's", 0, std::nullopt, 4, 1, "", "", ""};
  theirs.owner = &part;
  page.frames = {mine, theirs};
  h.state.heldStacks.back()(page);
  auto frames = h.receive(1)[0].at("body").at("stackFrames").as_array();
  REQUIRE(frames.size() == 2);
  auto a = frames[0].at("id").as_int64(), b = frames[1].at("id").as_int64();
  CHECK(a != b);  // the same local id, two owners
  auto scopes = [&h](std::int64_t frameId) {
    h.send("scopes", json::object{{"frameId", frameId}});
    auto r = h.receive(1)[0];
    return r.at("success").as_bool() ? std::string(r.at("body").at("scopes").at(0).at("name").as_string())
                                     : std::string(r.at("message").as_string());
  };
  CHECK(scopes(a) == "the fake backend does not support scopes");
  CHECK(scopes(b) == "part's frame 7");
  h.session->partGone(&part);  // a rank that exited: its ids name nothing any more
  CHECK(scopes(b) == "unknown frameId " + std::to_string(b) + " (ids are valid only until the program runs again)");
  CHECK(scopes(a) == "the fake backend does not support scopes");
  h.send("disconnect");
  h.receive(4);
}

TEST_CASE("a breakpoint a backend kept keeps its client id when placed under the part's id") {
  Harness h;
  h.send("initialize");
  h.receive(1);
  h.send("launch", json::object{{"program", "/bin/true"}});
  h.receive(3);
  PartBackend part;
  h.session->partAdded(&part);
  // As attach by pid answers before its agent is in: pending, under an id of its own.
  backends::BreakpointReport kept;
  kept.id = 1000000;
  kept.pending = true;
  h.session->breakpointChanged(h.session->backend(), kept);
  auto ev = h.receive(1)[0];
  auto clientId = ev.at("body").at("breakpoint").at("id").as_int64();
  CHECK(ev.at("body").at("breakpoint").at("reason") == "pending");
  backends::BreakpointReport placed;
  placed.id = 3;
  placed.verified = true;
  placed.line = 12;
  placed.owner = &part;
  h.session->breakpointPlaced(h.session->backend(), nullptr, 1000000, placed);
  ev = h.receive(1)[0];
  CHECK(ev.at("body").at("breakpoint").at("id") == clientId);
  CHECK(ev.at("body").at("breakpoint").at("verified") == true);
  // A stop at it names the part's id: the client sees the id it has.
  backends::StopReport s;
  s.reason = "breakpoint";
  s.threadId = 11;
  s.hitBreakpointIds = {3};
  s.breakpointsOwner = &part;
  h.session->stopped(h.session->backend(), s);
  ev = h.receive(1)[0];
  CHECK(ev.at("body").at("hitBreakpointIds").at(0) == clientId);
  h.send("disconnect");
  h.receive(4);
}

TEST_CASE("modules pages, whatever numbers the client sends") {
  Harness h;
  h.send("initialize");
  h.receive(1);
  h.send("launch", json::object{{"program", "/bin/true"}});
  h.receive(3);  // the response, initialized, process
  auto page = [&h](json::object args) {
    h.send("modules", std::move(args));
    auto r = h.receive(1);
    REQUIRE(kind(r[0]) == "response:modules");
    CHECK(r[0].at("body").at("totalModules") == 3);
    std::string ids;
    for (const auto& m : r[0].at("body").at("modules").as_array()) ids += m.at("id").as_string();
    return ids;
  };
  CHECK(page({}) == "123");
  CHECK(page({{"startModule", 1}, {"moduleCount", 1}}) == "2");
  CHECK(page({{"startModule", 2}, {"moduleCount", 5}}) == "3");
  CHECK(page({{"startModule", 7}}) == "");
  // start + count overflowed here (undefined behaviour) before.
  CHECK(page({{"startModule", INT64_MAX}, {"moduleCount", INT64_MAX}}) == "");
  CHECK(page({{"startModule", 1}, {"moduleCount", INT64_MAX}}) == "23");
  h.send("disconnect");
  h.receive(4);
}

TEST_CASE("session ids map back to their owner and die on clear") {
  adapter::HandleTable<int> t;
  int a = 0, b = 0;
  auto x = t.add(&a, 5), y = t.add(&b, 5);
  CHECK(x != y);
  CHECK(t.add(&a, 5) == x);
  CHECK(t.find(y)->owner == &b);
  CHECK(t.find(y)->local == 5);
  t.clear();
  CHECK(!t.find(x));
  CHECK(t.add(&a, 5) > y);  // a new id, never a reused one
  // Ids of a thread's stop go with that thread; those of no thread go with any.
  auto t1 = t.add(&a, 1, 11), t2 = t.add(&a, 2, 12), none = t.add(&b, 3);
  CHECK(t.find(t2)->thread == 12);
  t.forgetThreads({12});
  CHECK(t.find(t1));
  CHECK(!t.find(t2));
  CHECK(!t.find(none));
}
