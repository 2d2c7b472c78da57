// Test-only fixture: fork + PTRACE_TRACEME + exec, run to SIGTRAP stops, process_vm_* memory.
#include "traced_process.hpp"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace strata::native::symbols::test {

Result<void> ProcessMemory::read(std::uint64_t address, void* buffer, std::size_t size) {
  ++reads;
  iovec local{buffer, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n < 0) return errnoError(errors::kMemoryUnreadable, "process_vm_readv");
  if (static_cast<std::size_t>(n) != size) return Error{errors::kMemoryUnreadable, "short read of target memory", true};
  return {};
}

Result<void> ProcessMemory::write(std::uint64_t address, const void* buffer, std::size_t size) {
  iovec local{const_cast<void*>(buffer), size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = process_vm_writev(pid_, &local, 1, &remote, 1, 0);
  if (n < 0) return errnoError(errors::kMemoryUnwritable, "process_vm_writev");
  if (static_cast<std::size_t>(n) != size) return Error{errors::kMemoryUnwritable, "short write of target memory", true};
  return {};
}

Result<TracedProcess*> TracedProcess::start(const std::string& path, const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid < 0) return errnoError(errors::kSystemCallFailed, "fork");
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(path.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(path.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return errnoError(errors::kPtraceFailed, "waitpid");
  if (!WIFSTOPPED(status)) return Error{errors::kStartFailed, "target did not stop at exec", true};
  ptrace(PTRACE_SETOPTIONS, pid, nullptr, PTRACE_O_EXITKILL);
  return new TracedProcess(pid);
}

TracedProcess::~TracedProcess() {
  if (!exited_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

Result<void> TracedProcess::continueToTrap() {
  int signal = 0;
  for (;;) {
    if (ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void*>(static_cast<long>(signal))) != 0)
      return errnoError(errors::kPtraceFailed, "PTRACE_CONT");
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return errnoError(errors::kPtraceFailed, "waitpid");
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      exited_ = true;
      return Error{errors::kNoProcess, "target ended before the next SIGTRAP", true};
    }
    if (WSTOPSIG(status) == SIGTRAP) return {};
    signal = WSTOPSIG(status);
  }
}

Result<ThreadRegisters> TracedProcess::registers() {
  ThreadRegisters regs;
  regs.tid = pid_;
  if (ptrace(PTRACE_GETREGS, pid_, nullptr, &regs.gpr) != 0) return errnoError(errors::kPtraceFailed, "PTRACE_GETREGS");
  if (ptrace(PTRACE_GETFPREGS, pid_, nullptr, &regs.fpr) == 0) regs.hasFpr = true;
  return regs;
}

Result<void> TracedProcess::setRegisters(const ThreadRegisters& regs) {
  if (ptrace(PTRACE_SETREGS, pid_, nullptr, &regs.gpr) != 0) return errnoError(errors::kPtraceFailed, "PTRACE_SETREGS");
  return {};
}

Result<long> TracedProcess::insertBreakpoint(std::uint64_t address) {
  errno = 0;
  long word = ptrace(PTRACE_PEEKTEXT, pid_, reinterpret_cast<void*>(address), nullptr);
  if (errno != 0) return errnoError(errors::kMemoryUnreadable, "PTRACE_PEEKTEXT");
  long patched = (word & ~0xffL) | 0xcc;
  if (ptrace(PTRACE_POKETEXT, pid_, reinterpret_cast<void*>(address), reinterpret_cast<void*>(patched)) != 0)
    return errnoError(errors::kMemoryUnwritable, "PTRACE_POKETEXT");
  return word;
}

Result<void> TracedProcess::removeBreakpoint(std::uint64_t address, long original) {
  if (ptrace(PTRACE_POKETEXT, pid_, reinterpret_cast<void*>(address), reinterpret_cast<void*>(original)) != 0)
    return errnoError(errors::kMemoryUnwritable, "PTRACE_POKETEXT");
  return {};
}

int markerLine(const std::string& sourcePath, const std::string& marker) {
  std::ifstream in(sourcePath);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(marker) != std::string::npos) return n;
  return 0;
}

}  // namespace strata::native::symbols::test
