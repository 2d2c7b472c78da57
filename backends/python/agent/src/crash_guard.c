/* The agent's crash guard (strata/_strata_crash.so, loaded with ctypes by _crash.py): a handler
 * for the fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) that tells the adapter, over
 * a socket the agent dialed, which thread crashed where, and waits until the adapter's native
 * debugger has attached. Then it puts back the disposition it found (the default, or the
 * program's own handler, faulthandler's) and lets the signal happen again: a fault
 * re-executes its instruction, a signal sent by kill/raise/abort is raised again. The native
 * debugger sees that second delivery as a stop, with every register at the fault. Until a
 * crash the program pays nothing: no thread, no ptrace, one sigaction per signal.
 *
 * Everything the handler does is async-signal-safe: send, poll, read, sigaction, syscall. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static const int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
enum { kCount = sizeof kSignals / sizeof kSignals[0] };

static struct sigaction g_previous[kCount];
static _Atomic int g_fd = -1;
static _Atomic int g_state = 0; /* 0: armed, 1: one thread reports, 2: the adapter answered */
static int g_armed = 0;
/* How long a crashing thread waits for the adapter (it may be stuck or gone). */
static const int kWaitMs = 30000;

static char* put_text(char* p, const char* s) {
  while (*s) *p++ = *s++;
  return p;
}

static char* put_unsigned(char* p, uint64_t v, int base) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v % (uint64_t)base];
    v /= (uint64_t)base;
  } while (v);
  while (n) *p++ = digits[--n];
  return p;
}

static int index_of(int sig) {
  for (int i = 0; i < kCount; ++i)
    if (kSignals[i] == sig) return i;
  return -1;
}

static void on_fatal(int sig, siginfo_t* info, void* context) {
  (void)context;
  int saved = errno;
  int expected = 0;
  if (atomic_compare_exchange_strong(&g_state, &expected, 1)) {
    int fd = atomic_load(&g_fd);
    if (fd >= 0) {
      /* "STRATA-CRASH SIGNAL CODE ADDRESS TID\n" */
      char line[128];
      char* p = put_text(line, "STRATA-CRASH ");
      p = put_unsigned(p, (uint64_t)sig, 10);
      *p++ = ' ';
      if (info->si_code < 0) {
        *p++ = '-';
        p = put_unsigned(p, (uint64_t)(-(int64_t)info->si_code), 10);
      } else {
        p = put_unsigned(p, (uint64_t)info->si_code, 10);
      }
      p = put_text(p, " 0x");
      p = put_unsigned(p, (uint64_t)(uintptr_t)info->si_addr, 16);
      *p++ = ' ';
      p = put_unsigned(p, (uint64_t)syscall(SYS_gettid), 10);
      *p++ = '\n';
      const char* at = line;
      while (at < p) {
        /* send, not write: an adapter gone must not end the program by SIGPIPE instead. */
        ssize_t n = send(fd, at, (size_t)(p - at), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        at += n;
      }
      /* The adapter answers one byte once its debugger is in (or closes: it is gone). */
      struct pollfd pfd = {fd, POLLIN, 0};
      int waited = poll(&pfd, 1, kWaitMs);
      if (waited > 0) {
        char byte;
        while (read(fd, &byte, 1) < 0 && errno == EINTR) {
        }
      }
    }
    atomic_store(&g_state, 2);
  } else {
    /* Another thread is reporting its crash: this one waits for the same answer. */
    struct timespec tick = {0, 1000000};
    for (int i = 0; i < kWaitMs && atomic_load(&g_state) == 1; ++i) nanosleep(&tick, NULL);
  }
  /* The signal again, under the disposition the program had: the debugger stops it. */
  int i = index_of(sig);
  if (i >= 0) sigaction(sig, &g_previous[i], NULL);
  if (info->si_code <= 0) syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
  errno = saved;
}

/* Arms the guard: crashes are told over `fd`. `tracer`: a process that may ptrace this one
 * (the adapter, where Yama allows only ancestors), 0 for none. Returns 0, or -1. */
EXPORT int strata_crash_arm(int fd, int tracer) {
  if (fd < 0) return -1;
  if (tracer > 0) prctl(PR_SET_PTRACER, (unsigned long)tracer, 0, 0, 0);
  atomic_store(&g_fd, fd);
  atomic_store(&g_state, 0);
  if (g_armed) return 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_fatal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < kCount; ++i)
    if (sigaction(kSignals[i], &action, &g_previous[i]) != 0) return -1;
  g_armed = 1;
  return 0;
}

/* Puts back what each signal had, unless the program has put its own handler there since. */
EXPORT void strata_crash_disarm(void) {
  atomic_store(&g_fd, -1);
  if (!g_armed) return;
  for (int i = 0; i < kCount; ++i) {
    struct sigaction now;
    if (sigaction(kSignals[i], NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_fatal)
      sigaction(kSignals[i], &g_previous[i], NULL);
  }
  g_armed = 0;
}
