// Debuggee: 8 threads named worker-N each calling hit_me() and step_me() 100 times; prints the
// total (800) and exits 1 unless step_me's locked add ran exactly 800 times too.
#include <pthread.h>

#include <atomic>
#include <string>
#include <cstdio>
#include <thread>
#include <vector>

std::atomic<int> total{0};

// step_me's first instruction is a locked add to memory, which the engine cannot emulate: a
// breakpoint there is stepped over by lifting the int3 and single-stepping the thread.
extern "C" {
int stepped = 0;
void step_me(void);
}
asm(".text\n"
    ".globl step_me\n"
    ".type step_me, @function\n"
    "step_me:\n"
    "  lock addl $1, stepped(%rip)\n"
    "  ret\n"
    ".size step_me, .-step_me\n");

extern "C" __attribute__((noinline)) void hit_me(int thread) {  // @bp:hit_me
  total.fetch_add(1 + 0 * thread);
}

int main() {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t]() {
      pthread_setname_np(pthread_self(), ("worker-" + std::to_string(t)).c_str());
      for (int i = 0; i < 100; ++i) {
        hit_me(t);
        step_me();
      }
    });
  for (auto& th : threads) th.join();
  std::printf("total=%d\n", total.load());
  return stepped == 800 ? 0 : 1;
}
