// Debuggee for the native end-to-end tests: one program, one mode per argv[1]; `// @bp:` marks
// the lines tests break on. Built -g -O0 by CMake, never sanitized.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

struct Point {
  int x;
  int y;
};

int watched_counter = 0;
long global_total = 0;
static pthread_barrier_t barrier;

int square(int v) {
  int result = v * v;  // @bp:square_body
  return result;
}

int add(int a, int b) {
  return a + b;  // @bp:add_body
}

int combine(int a, int b) {
  int r = add(square(a), square(b));  // @bp:combine_call
  return r;  // @bp:combine_return
}

int depth(int n) {
  if (n == 0) return 0;  // @bp:depth_base
  return 1 + depth(n - 1);  // @bp:depth_call
}

static void* worker(void* arg) {
  int id = static_cast<int>(reinterpret_cast<long>(arg));
  char name[16];
  std::snprintf(name, sizeof name, "worker-%d", id);
  pthread_setname_np(pthread_self(), name);
  pthread_barrier_wait(&barrier);
  int mine = id * 10;
  __atomic_add_fetch(&global_total, mine, __ATOMIC_SEQ_CST);  // @bp:worker_line
  pthread_barrier_wait(&barrier);
  return nullptr;
}

static int threads() {
  pthread_barrier_init(&barrier, nullptr, 9);
  pthread_t t[8];
  for (long i = 0; i < 8; ++i) pthread_create(&t[i], nullptr, worker, reinterpret_cast<void*>(i));
  pthread_barrier_wait(&barrier);
  pthread_barrier_wait(&barrier);
  for (auto& one : t) pthread_join(one, nullptr);
  std::printf("total %ld\n", global_total);
  return 0;
}

static int loop() {
  // @bp:loop_comment (no code here: a breakpoint moves to the next line)
  int sum = 0;
  for (int i = 0; i < 10; ++i) {
    sum += square(i);  // @bp:loop_body
  }
  std::printf("sum %d\n", sum);
  return sum == 285 ? 0 : 1;
}

static int crash(int depthLeft) {
  if (depthLeft > 0) return crash(depthLeft - 1);  // @bp:crash_recurse
  int victim = 42;
  int* nothing = nullptr;
  *nothing = victim;  // @bp:crash_line
  return victim;
}

// An exception nothing catches: std::terminate, then abort().
static int load_shard(int shard) {
  if (shard > 10) throw std::runtime_error("bad shard " + std::to_string(shard));  // @bp:throw_line
  return shard;
}

static int stl() {
  std::string text = "hello strata";
  std::vector<int> numbers = {1, 2, 3, 4, 5};
  std::vector<int> big(100000);
  for (int i = 0; i < 100000; ++i) big[i] = i * 2;
  std::map<std::string, int> ages = {{"ada", 36}, {"linus", 54}};
  std::unordered_map<int, std::string> names = {{1, "one"}, {2, "two"}};
  auto owned = std::make_unique<Point>(Point{3, 4});
  auto shared = std::make_shared<Point>(Point{5, 6});
  std::optional<int> maybe = 7;
  std::optional<int> nothing;
  Point pt{1, 2};
  Point* ptr = &pt;
  long counter = 10;
  std::printf("%s %zu %zu %d\n", text.c_str(), numbers.size() + big.size(), ages.size() + names.size(),  // @bp:stl_line
              owned->x + shared->y + maybe.value_or(0) + nothing.value_or(0) + ptr->x + static_cast<int>(counter));
  return counter == 99 ? 3 : 0;  // @bp:stl_after
}

static int watch() {
  for (int i = 0; i < 5; ++i) {
    watched_counter += 1;  // @bp:watch_write
  }
  std::printf("counter %d\n", watched_counter);
  return 0;
}

static int steps() {
  int total = combine(2, 3);  // @bp:steps_call
  int d = depth(5);  // @bp:steps_depth
  std::printf("steps %d %d\n", total, d);  // @bp:steps_print
  return 0;
}

static int plugin(const char* path) {
  std::printf("loading plugin\n");
  std::fflush(stdout);
  void* h = dlopen(path, RTLD_NOW);
  if (!h) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  auto fn = reinterpret_cast<int (*)(int)>(dlsym(h, "plugin_compute"));
  int r = fn(20);
  std::printf("plugin says %d\n", r);
  return 0;
}

static int term_fd = -1;
static void on_term(int) {
  static const char said[] = "got SIGTERM\n";
  (void)!write(term_fd, said, sizeof said - 1);
  _exit(0);
}

// Writes results to a file (or stdout) slowly, so a debugger can attach, break and detach meanwhile.
// With `term`, a SIGTERM is written down ("got SIGTERM") before the program ends.
static int output(const char* path, int rounds, int delayMs, bool term) {
  FILE* out = path && std::strcmp(path, "-") != 0 ? std::fopen(path, "w") : stdout;
  if (!out) return 2;
  if (term) {
    term_fd = fileno(out);
    std::signal(SIGTERM, on_term);
  }
  for (int i = 0; i < rounds; ++i) {
    int v = square(i) + add(i, 1);
    std::fprintf(out, "line %d value %d\n", i, v);  // @bp:output_line
    std::fflush(out);
    if (delayMs) usleep(delayMs * 1000);
  }
  std::fprintf(out, "done\n");
  if (out != stdout) std::fclose(out);
  return 0;
}

static volatile sig_atomic_t got_signal = 0;
static void on_signal(int signo) { got_signal = signo; }

// A signal the program handles itself reaches it under the debugger as without one.
static int own_signal() {
  std::signal(SIGUSR1, on_signal);
  raise(SIGUSR1);
  std::printf("handled %d\n", static_cast<int>(got_signal));
  return got_signal == SIGUSR1 ? 0 : 1;
}

// A raw pause(2) system call whose `syscall` instruction sits at a known place: a breakpoint
// there makes the engine single-step a call that never returns (the teardown test).
extern "C" void block_in_pause(void);
asm(".text\n"
    ".globl block_in_pause\n"
    ".type block_in_pause, @function\n"
    "block_in_pause:\n"
    "  mov $34, %eax\n"  // SYS_pause
    "  .globl block_syscall\n"
    "block_syscall:\n"
    "  syscall\n"
    "  ret\n"
    ".size block_in_pause, .-block_in_pause\n");
extern "C" char block_syscall[];

static int block() {
  std::printf("syscall at %p\n", static_cast<void*>(block_syscall));
  std::fflush(stdout);
  sleep(2);  // time for the test to set an instruction breakpoint there
  block_in_pause();
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "loop";
  if (!std::strcmp(mode, "threads")) return threads();
  if (!std::strcmp(mode, "loop")) return loop();
  if (!std::strcmp(mode, "recurse")) {
    int d = depth(1000);
    std::printf("depth %d\n", d);
    return 0;
  }
  if (!std::strcmp(mode, "crash")) return crash(3);
  if (!std::strcmp(mode, "throw")) return load_shard(12);  // @bp:throw_call
  if (!std::strcmp(mode, "stl")) return stl();
  if (!std::strcmp(mode, "watch")) return watch();
  if (!std::strcmp(mode, "steps")) return steps();
  if (!std::strcmp(mode, "plugin")) return plugin(argc > 2 ? argv[2] : "");
  if (!std::strcmp(mode, "output"))
    return output(argc > 2 ? argv[2] : "-", argc > 3 ? std::atoi(argv[3]) : 10, argc > 4 ? std::atoi(argv[4]) : 0,
                  argc > 5 && !std::strcmp(argv[5], "term"));
  if (!std::strcmp(mode, "abort")) std::abort();
  if (!std::strcmp(mode, "signal")) return own_signal();
  if (!std::strcmp(mode, "block")) return block();
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
