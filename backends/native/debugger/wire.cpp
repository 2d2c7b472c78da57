// The engine protocol's framing and value codecs (wire.hpp).
#include "wire.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace strata::native::debugger::wire {

namespace {

bool writeAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool readAll(int fd, char* data, std::size_t size, std::vector<int>* fds) {
  while (size > 0) {
    iovec iov{data, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = fds ? control : nullptr;
    msg.msg_controllen = fds ? sizeof control : 0;
    ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (fds) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const auto* p = reinterpret_cast<const int*>(CMSG_DATA(c));
        for (std::size_t i = 0; i < count; ++i) fds->push_back(p[i]);
      }
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool send(int fd, Kind kind, std::uint32_t seq, const std::string& payload, const std::vector<int>& fds) {
  Header h;
  h.size = static_cast<std::uint32_t>(payload.size());
  h.kind = static_cast<std::uint8_t>(kind);
  h.seq = seq;
  if (fds.empty()) {
    // One write for small messages: a reader never sees half of one.
    std::string all(reinterpret_cast<const char*>(&h), sizeof h);
    all += payload;
    return writeAll(fd, all.data(), all.size());
  }
  // The descriptors ride on the header's bytes.
  iovec iov{&h, sizeof h};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  ssize_t n;
  do n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  if (static_cast<std::size_t>(n) < sizeof h &&
      !writeAll(fd, reinterpret_cast<const char*>(&h) + n, sizeof h - static_cast<std::size_t>(n)))
    return false;
  return writeAll(fd, payload.data(), payload.size());
}

bool receive(int fd, Message& out) {
  Header h;
  out.fds.clear();
  if (!readAll(fd, reinterpret_cast<char*>(&h), sizeof h, &out.fds)) return false;
  if (h.size > kMaxPayload) return false;
  out.kind = static_cast<Kind>(h.kind);
  out.seq = h.seq;
  out.payload.resize(h.size);
  return readAll(fd, out.payload.data(), h.size, nullptr);
}

void put(Writer& w, const Error& e) {
  w.pod(static_cast<std::int32_t>(toInt(e.id))).str(e.message).boolean(e.showUser);
}

Error getError(Reader& r) {
  auto id = r.pod<std::int32_t>();
  std::string message = r.str();
  bool show = r.boolean();
  if (r.failed()) return Error{errors::kEngineProcess, "strata-engine sent a malformed error", true};
  return Error{ErrorId{id}, std::move(message), show};
}

void put(Writer& w, const ThreadRegisters& regs) {
  w.pod(regs.tid).pod(regs.gpr).boolean(regs.hasFpr);
  if (regs.hasFpr) w.pod(regs.fpr);
}

ThreadRegisters getRegisters(Reader& r) {
  ThreadRegisters regs;
  regs.tid = r.pod<pid_t>();
  regs.gpr = r.pod<user_regs_struct>();
  regs.hasFpr = r.boolean();
  if (regs.hasFpr) regs.fpr = r.pod<user_fpregs_struct>();
  return regs;
}

void put(Writer& w, const std::vector<LoadedObject>& objects) {
  w.pod(static_cast<std::uint32_t>(objects.size()));
  for (const auto& o : objects) w.str(o.path).pod(o.loadBias).pod(o.dynamicAddress);
}

std::vector<LoadedObject> getObjects(Reader& r) {
  std::vector<LoadedObject> out;
  auto n = r.pod<std::uint32_t>();
  for (std::uint32_t i = 0; i < n && !r.failed(); ++i) {
    LoadedObject o;
    o.path = r.str();
    o.loadBias = r.pod<std::uint64_t>();
    o.dynamicAddress = r.pod<std::uint64_t>();
    out.push_back(std::move(o));
  }
  return out;
}

void put(Writer& w, const engine::EngineStop& s) {
  w.pod(s.pid).pod(s.tid).pod(static_cast<std::int32_t>(s.reason)).pod(s.pc);
  w.pod(static_cast<std::uint32_t>(s.breakpoints.size()));
  for (auto id : s.breakpoints) w.pod(id);
  w.pod(static_cast<std::int32_t>(s.watchpointSlot)).pod(s.watchAddress);
  w.pod(static_cast<std::int32_t>(s.signal.signo)).pod(static_cast<std::int32_t>(s.signal.code));
  w.pod(s.signal.faultAddress).str(s.signal.description);
}

engine::EngineStop getStop(Reader& r) {
  engine::EngineStop s;
  s.pid = r.pod<pid_t>();
  s.tid = r.pod<pid_t>();
  s.reason = static_cast<engine::EngineStopReason>(r.pod<std::int32_t>());
  s.pc = r.pod<std::uint64_t>();
  auto n = r.pod<std::uint32_t>();
  for (std::uint32_t i = 0; i < n && !r.failed(); ++i) s.breakpoints.push_back(r.pod<engine::BreakpointId>());
  s.watchpointSlot = r.pod<std::int32_t>();
  s.watchAddress = r.pod<std::uint64_t>();
  s.signal.signo = r.pod<std::int32_t>();
  s.signal.code = r.pod<std::int32_t>();
  s.signal.faultAddress = r.pod<std::uint64_t>();
  s.signal.description = r.str();
  return s;
}

void put(Writer& w, const engine::ExitEvent& e) {
  w.pod(e.pid).boolean(e.signaled).pod(static_cast<std::int32_t>(e.exitCode)).pod(static_cast<std::int32_t>(e.signal));
  w.str(e.description);
}

engine::ExitEvent getExit(Reader& r) {
  engine::ExitEvent e;
  e.pid = r.pod<pid_t>();
  e.signaled = r.boolean();
  e.exitCode = r.pod<std::int32_t>();
  e.signal = r.pod<std::int32_t>();
  e.description = r.str();
  return e;
}

void put(Writer& w, const engine::HitRule& rule) {
  w.pod(rule.thread).pod(rule.stackPointer).pod(rule.group).str(rule.condition).str(rule.hitCondition);
  w.str(rule.logMessage).pod(static_cast<std::int32_t>(rule.breakpointNumber)).boolean(rule.neverStop);
}

engine::HitRule getRule(Reader& r) {
  engine::HitRule rule;
  rule.thread = r.pod<pid_t>();
  rule.stackPointer = r.pod<std::uint64_t>();
  rule.group = r.pod<std::uint32_t>();
  rule.condition = r.str();
  rule.hitCondition = r.str();
  rule.logMessage = r.str();
  rule.breakpointNumber = r.pod<std::int32_t>();
  rule.neverStop = r.boolean();
  return rule;
}

void put(Writer& w, const engine::LaunchOptions& o) {
  w.str(o.program).pod(static_cast<std::uint32_t>(o.args.size()));
  for (const auto& a : o.args) w.str(a);
  w.str(o.cwd).boolean(o.env.has_value());
  if (o.env) {
    w.pod(static_cast<std::uint32_t>(o.env->size()));
    for (const auto& e : *o.env) w.str(e);
  }
  // Which of stdin, stdout, stderr come as descriptors (in that order).
  w.boolean(o.stdinFd >= 0).boolean(o.stdoutFd >= 0).boolean(o.stderrFd >= 0);
  w.pod(static_cast<std::int32_t>(o.onDisconnect));
}

engine::LaunchOptions getLaunch(Reader& r) {
  engine::LaunchOptions o;
  o.program = r.str();
  auto n = r.pod<std::uint32_t>();
  for (std::uint32_t i = 0; i < n && !r.failed(); ++i) o.args.push_back(r.str());
  o.cwd = r.str();
  if (r.boolean()) {
    std::vector<std::string> env;
    auto m = r.pod<std::uint32_t>();
    for (std::uint32_t i = 0; i < m && !r.failed(); ++i) env.push_back(r.str());
    o.env = std::move(env);
  }
  // Marks: the server replaces them with the received descriptors.
  o.stdinFd = r.boolean() ? 0 : -1;
  o.stdoutFd = r.boolean() ? 0 : -1;
  o.stderrFd = r.boolean() ? 0 : -1;
  o.onDisconnect = static_cast<engine::OnDisconnect>(r.pod<std::int32_t>());
  return o;
}

}  // namespace strata::native::debugger::wire
