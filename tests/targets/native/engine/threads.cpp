// Debuggee: 8 threads named worker-N each calling hit_me() 100 times; prints the total (800).
#include <pthread.h>

#include <atomic>
#include <string>
#include <cstdio>
#include <thread>
#include <vector>

std::atomic<int> total{0};

extern "C" __attribute__((noinline)) void hit_me(int thread) {  // @bp:hit_me
  total.fetch_add(1 + 0 * thread);
}

int main() {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t]() {
      pthread_setname_np(pthread_self(), ("worker-" + std::to_string(t)).c_str());
      for (int i = 0; i < 100; ++i) hit_me(t);
    });
  for (auto& th : threads) th.join();
  std::printf("total=%d\n", total.load());
  return 0;
}
