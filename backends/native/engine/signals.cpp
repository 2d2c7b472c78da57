// Signal names and the human descriptions of faults reported at an exception stop.
#include <signal.h>

#include <cstdio>
#include <cstring>

#include "engine_impl.hpp"

namespace strata::native::engine {

std::string signalName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  if (abbrev) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signo);
}

bool isFaultSignal(int signo) {
  return signo == SIGSEGV || signo == SIGBUS || signo == SIGFPE || signo == SIGILL || signo == SIGABRT;
}

namespace {

const char* codeText(int signo, int code) {
  if (code == SI_USER) return "sent by kill";
  if (code == SI_TKILL) return "sent by tkill";
  if (code == SI_QUEUE) return "sent by sigqueue";
  switch (signo) {
    case SIGSEGV:
      if (code == SEGV_MAPERR) return "address not mapped to object";
      if (code == SEGV_ACCERR) return "invalid permissions for mapped object";
      if (code == SEGV_BNDERR) return "failed address bound checks";
      if (code == SEGV_PKUERR) return "access denied by memory protection keys";
      if (code == SI_KERNEL) return "general protection fault";
      break;
    case SIGBUS:
      if (code == BUS_ADRALN) return "invalid address alignment";
      if (code == BUS_ADRERR) return "nonexistent physical address";
      if (code == BUS_OBJERR) return "object-specific hardware error";
      break;
    case SIGFPE:
      if (code == FPE_INTDIV) return "integer divide by zero";
      if (code == FPE_INTOVF) return "integer overflow";
      if (code == FPE_FLTDIV) return "floating-point divide by zero";
      if (code == FPE_FLTOVF) return "floating-point overflow";
      if (code == FPE_FLTUND) return "floating-point underflow";
      if (code == FPE_FLTRES) return "floating-point inexact result";
      if (code == FPE_FLTINV) return "floating-point invalid operation";
      break;
    case SIGILL:
      if (code == ILL_ILLOPC) return "illegal opcode";
      if (code == ILL_ILLOPN) return "illegal operand";
      if (code == ILL_PRVOPC) return "privileged opcode";
      if (code == ILL_BADSTK) return "internal stack error";
      break;
    default:
      break;
  }
  return nullptr;
}

}  // namespace

std::string describeSignal(int signo, int code, std::uint64_t address) {
  std::string text = signalName(signo);
  const char* what = codeText(signo, code);
  if (signo == SIGABRT) return text + ": aborted" + (what ? std::string(" (") + what + ")" : "");
  if (what) text += std::string(": ") + what;
  if (signo == SIGSEGV || signo == SIGBUS || signo == SIGFPE || signo == SIGILL) {
    if (code > 0 && code != SI_KERNEL) {
      char buf[40];
      std::snprintf(buf, sizeof buf, " at 0x%llx", static_cast<unsigned long long>(address));
      text += buf;
    }
  }
  return text;
}

}  // namespace strata::native::engine
