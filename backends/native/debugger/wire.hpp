// The engine protocol between strata-dap (RemoteEngine) and strata-engine (serveEngine): length-
// framed binary messages over a Unix stream socket, file descriptors riding along (a launch's
// stdin/stdout/stderr) as SCM_RIGHTS.
//
// Every message: a 12-byte header {payload size, kind, seq} and its payload. Requests carry the
// client's seq and get exactly one Reply with it. Events (Stopped, Libraries, ...) are sent on
// the engine thread with the process held; the engine waits for EventDone, serving requests
// meanwhile, so a client may insert breakpoints before a library's code runs, as with the
// in-process engine. Sites and Output are one-way.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "strata/native/engine/engine.hpp"
#include "strata/result.hpp"

namespace strata::native::debugger::wire {

enum class Kind : std::uint8_t {
  // Requests (client → engine).
  Launch = 1,
  Attach,
  Detach,
  Kill,
  Resume,
  Pause,
  StepInstruction,
  StepOut,
  StepRange,
  AddBreakpoint,
  RemoveBreakpoint,
  EnableBreakpoint,
  AddWatchpoint,
  RemoveWatchpoint,
  Registers,
  SetRegisters,
  Threads,
  LoadedObjects,
  StepOverCounts,
  WriteMemory,
  HoldBegin,  // every thread stopped until HoldEnd (whileStopped)
  HoldEnd,
  EventDone,  // the client has handled the last event
  // Engine → client.
  Reply = 64,
  Stopped,
  Exited,
  ThreadStarted,
  ThreadExited,
  Libraries,
  Signal,
  Sites,   // {address, original} pairs: see engine::SiteObserver
  Output,  // a line a HitRule printed
};

// Events the engine waits on (EventDone) before the process may go on.
inline bool isEvent(Kind k) {
  return k == Kind::Stopped || k == Kind::Exited || k == Kind::ThreadStarted || k == Kind::ThreadExited ||
         k == Kind::Libraries || k == Kind::Signal;
}

struct Header {
  std::uint32_t size = 0;
  std::uint8_t kind = 0;
  std::uint8_t pad[3] = {};
  std::uint32_t seq = 0;
};
static_assert(sizeof(Header) == 12);

constexpr std::uint32_t kMaxPayload = 64u << 20;

struct Message {
  Kind kind = Kind::Reply;
  std::uint32_t seq = 0;
  std::string payload;
  std::vector<int> fds;  // received descriptors (the receiver owns them)
};

class Writer {
 public:
  template <class T>
  Writer& pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Writer& str(const std::string& s) {
    pod(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
    return *this;
  }
  Writer& boolean(bool b) { return pod(static_cast<std::uint8_t>(b ? 1 : 0)); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what a Writer wrote; any read past the end sets failed() and yields zeros.
class Reader {
 public:
  explicit Reader(const std::string& s) : p_(s.data()), end_(s.data() + s.size()) {}
  template <class T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    if (static_cast<std::size_t>(end_ - p_) < sizeof v) {
      failed_ = true;
      p_ = end_;
      return v;
    }
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  std::string str() {
    auto n = pod<std::uint32_t>();
    if (static_cast<std::size_t>(end_ - p_) < n) {
      failed_ = true;
      p_ = end_;
      return {};
    }
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  bool boolean() { return pod<std::uint8_t>() != 0; }
  bool failed() const { return failed_; }

 private:
  const char* p_;
  const char* end_;
  bool failed_ = false;
};

// Whole messages over a blocking socket. False: the peer is gone (or sent garbage).
bool send(int fd, Kind kind, std::uint32_t seq, const std::string& payload, const std::vector<int>& fds = {});
bool receive(int fd, Message& out);

// Values.
void put(Writer& w, const Error& e);
Error getError(Reader& r);
void put(Writer& w, const ThreadRegisters& regs);
ThreadRegisters getRegisters(Reader& r);
void put(Writer& w, const std::vector<LoadedObject>& objects);
std::vector<LoadedObject> getObjects(Reader& r);
void put(Writer& w, const engine::EngineStop& stop);
engine::EngineStop getStop(Reader& r);
void put(Writer& w, const engine::ExitEvent& exit);
engine::ExitEvent getExit(Reader& r);
void put(Writer& w, const engine::HitRule& rule);
engine::HitRule getRule(Reader& r);
void put(Writer& w, const engine::LaunchOptions& options);  // the descriptors travel apart
engine::LaunchOptions getLaunch(Reader& r);

// A reply: ok flag, then the value (written by the caller) or the error.
inline std::string replyError(const Error& e) {
  Writer w;
  w.boolean(false);
  put(w, e);
  return w.take();
}

}  // namespace strata::native::debugger::wire
