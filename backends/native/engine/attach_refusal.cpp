// Why the kernel refused PTRACE_SEIZE, told from /proc the way the kernel decides it, and what
// the user can do about it.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine_impl.hpp"

namespace strata::native::engine {

namespace {

constexpr int kCapSysPtrace = 19;  // linux/capability.h

std::string procField(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      auto start = line.find_first_not_of(" \t", key.size());
      return start == std::string::npos ? "" : line.substr(start);
    }
  return {};
}

std::string statusField(pid_t pid, const std::string& key) {
  return procField("/proc/" + std::to_string(pid) + "/status", key);
}

// "Uid:" or "Gid:" of /proc/PID/status: real, effective, saved (the filesystem id is not
// what ptrace compares). Empty when unreadable.
std::vector<unsigned> ids(pid_t pid, const char* key) {
  std::istringstream in(statusField(pid, key));
  std::vector<unsigned> out;
  unsigned v;
  while (out.size() < 3 && in >> v) out.push_back(v);
  if (out.size() != 3) out.clear();
  return out;
}

bool weHaveCapSysPtrace() {
  std::string hex = procField("/proc/self/status", "CapEff:");
  if (hex.empty()) return false;
  return (std::strtoull(hex.c_str(), nullptr, 16) >> kCapSysPtrace) & 1;
}

std::string userName(unsigned uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[1024];
  std::string text = "uid " + std::to_string(uid);
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) text += std::string(" (") + found->pw_name + ")";
  return text;
}

std::string tracerText(pid_t pid) {
  std::string tracer = statusField(pid, "TracerPid:");
  if (tracer.empty() || tracer == "0") return {};
  // TracerPid names the tracing thread; a user knows its process.
  pid_t tracerTid = std::atoi(tracer.c_str());
  std::string tgid = statusField(tracerTid, "Tgid:");
  pid_t tracerPid = tgid.empty() ? tracerTid : std::atoi(tgid.c_str());
  std::string name;
  std::ifstream comm("/proc/" + std::to_string(tracerPid) + "/comm");
  std::getline(comm, name);
  if (name == "strata-engine") {
    // Strata's engine process: the debugger a user knows is the strata-dap that started it.
    pid_t parent = std::atoi(statusField(tracerPid, "PPid:").c_str());
    std::string parentName;
    std::ifstream parentComm("/proc/" + std::to_string(parent) + "/comm");
    std::getline(parentComm, parentName);
    if (parent > 1 && !parentName.empty())
      name += ", the engine of process " + std::to_string(parent) + " (" + parentName + ")";
  }
  return "it is already traced by process " + std::to_string(tracerPid) + (name.empty() ? "" : " (" + name + ")") +
         "; only one debugger can attach at a time: detach that one first";
}

// Yama's rule, when it is what refused: scope 1 and 2 yield to CAP_SYS_PTRACE, 3 to nothing.
std::string yamaText(bool capable) {
  std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(yama >> scope) || scope <= 0 || (capable && scope < 3)) return {};
  std::string text = "kernel.yama.ptrace_scope is " + std::to_string(scope);
  if (scope == 1)
    return text + ", so a process may trace only its own descendants: run `sudo sysctl kernel.yama.ptrace_scope=0`, "
                  "give the debugger CAP_SYS_PTRACE, or start the program under the debugger (launch) instead";
  if (scope == 2)
    return text + ", so only a process with CAP_SYS_PTRACE may attach: run the debugger as root, or "
                  "`sudo sysctl kernel.yama.ptrace_scope=0`";
  return text + ", so attaching is disabled until the next reboot: start the program under the debugger (launch) "
                "instead";
}

// The kernel's own rule (__ptrace_may_access): without CAP_SYS_PTRACE the tracer's real uid and
// gid must equal the target's real, effective and saved ones, and the target must be dumpable.
std::string credentialsText(pid_t pid) {
  auto uids = ids(pid, "Uid:");
  auto gids = ids(pid, "Gid:");
  if (uids.empty() || gids.empty()) return {};
  unsigned ourUid = getuid(), ourGid = getgid();
  bool otherUser = uids[0] != ourUid || uids[1] != ourUid || uids[2] != ourUid;
  bool otherGroup = gids[0] != ourGid || gids[1] != ourGid || gids[2] != ourGid;
  if (otherUser || otherGroup) {
    std::string who = otherUser
        ? (uids[0] == uids[1] && uids[1] == uids[2]
               ? "it runs as " + userName(uids[0])
               : "it runs with user ids " + std::to_string(uids[0]) + "/" + std::to_string(uids[1]) + "/" +
                     std::to_string(uids[2]) + " (real/effective/saved: a set-user-ID program)")
        : "it runs with group ids " + std::to_string(gids[0]) + "/" + std::to_string(gids[1]) + "/" +
              std::to_string(gids[2]) + " (real/effective/saved) and the debugger with gid " +
              std::to_string(ourGid);
    if (geteuid() == 0)
      return who + ", and the debugger runs as root but without CAP_SYS_PTRACE, which tracing another "
                   "user's process needs: in a container, start it with --cap-add=SYS_PTRACE";
    return who + (otherUser ? " and the debugger as " + userName(ourUid) : std::string()) +
           ": run the debugger as that user or as root, or give it CAP_SYS_PTRACE";
  }
  // Same ids: the /proc files of a process that is not dumpable belong to root.
  struct stat st {};
  std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  if (::stat(stat.c_str(), &st) == 0 && st.st_uid != uids[1])
    return "it is not dumpable (it called prctl(PR_SET_DUMPABLE, 0) or changed its ids), and only a debugger "
           "with CAP_SYS_PTRACE may attach to such a process: run the debugger as root";
  return {};
}

}  // namespace

Error attachError(pid_t pid, int err) {
  std::string what = "attach to process " + std::to_string(pid);
  if (err == ESRCH) return Error{errors::kNoSuchProcess, what + ": no such process", true};
  if (err != EPERM) return errnoError(errors::kAttachRefused, what, err);
  what += ": Operation not permitted: ";
  if (std::string t = tracerText(pid); !t.empty()) return Error{errors::kAttachRefused, what + t, true};
  bool capable = weHaveCapSysPtrace();
  if (std::string t = yamaText(capable); !t.empty()) return Error{errors::kAttachRefused, what + t, true};
  if (!capable)
    if (std::string t = credentialsText(pid); !t.empty()) return Error{errors::kAttachRefused, what + t, true};
  return Error{errors::kAttachRefused, what + "the ids and capabilities allow it, so a security module (SELinux, AppArmor) or a "
                         "seccomp filter forbids ptrace here",
               true};
}

}  // namespace strata::native::engine
