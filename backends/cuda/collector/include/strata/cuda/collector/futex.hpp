// Futex wait/wake on a word of a ring file: shared (not PRIVATE) futexes, so they work across
// the producer's and the reader's processes on the same file mapping.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <ctime>

namespace strata::cuda::ring {

// Sleeps while *word == expected, at most timeoutNs; returns early on a wake or a change.
inline void futexWait(std::uint32_t* word, std::uint32_t expected, std::uint64_t timeoutNs) {
  timespec ts{static_cast<time_t>(timeoutNs / 1000000000ull), static_cast<long>(timeoutNs % 1000000000ull)};
  syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, nullptr, 0);
}

inline void futexWakeAll(std::uint32_t* word) { syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0); }

}  // namespace strata::cuda::ring
