// `strata gpu run`: runs a program with the CUDA collector injected (GpuCollection's launch
// environment), drains its rings into a store file while it runs, and prints a summary.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "adapter/cli/gpu.hpp"
#include "strata/cuda/live/gpu_collection.hpp"

namespace strata::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace strata::cuda;

namespace {

int usage(const std::string& message) {
  std::fprintf(stderr,
               "strata: gpu run: %s\nusage: strata gpu run [--trace|--stacks|--off] [--store FILE] [--profile NAME[:N]] -- PROGRAM "
               "[ARGS...]\n",
               message.c_str());
  return 2;
}

// Strata's own lines go to stderr, so the program's stdout stays the program's.
void say(const std::string& text) {
  std::fflush(stdout);
  std::fprintf(stderr, "strata: %s\n", text.c_str());
}

std::string defaultStorePath(const std::string& program) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::string base = fs::path(program).filename().string();
  for (char& c : base)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  std::string path = "strata-gpu-" + base + "-" + stamp + ".strata";
  for (int n = 2; fs::exists(path); ++n) path = "strata-gpu-" + base + "-" + stamp + "-" + std::to_string(n) + ".strata";
  return path;
}

}  // namespace

int gpuRun(const std::vector<std::string>& args) {
  GpuMode mode = GpuMode::Trace;
  std::string storePath, profile;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--stacks") mode = GpuMode::Stacks;
    else if (a == "--trace") mode = GpuMode::Trace;
    else if (a == "--off") mode = GpuMode::Off;
    else if (a == "--store") {
      if (i + 1 >= args.size()) return usage("--store needs a FILE");
      storePath = args[++i];
    } else if (a == "--profile") {
      if (i + 1 >= args.size() || args[i + 1].starts_with("-"))
        return usage("--profile needs NAME[:N] (a kernel's name or part of it, N launches)");
      profile = args[++i];
      std::string kernel;
      unsigned count = 0;
      if (auto r = parseProfile(profile, kernel, count); !r) return usage(r.error().message);
    } else if (!a.empty() && a[0] == '-') return usage("unknown option '" + a + "'");
    else break;
  }
  std::vector<std::string> command(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (command.empty()) return usage("needs a program: strata gpu run -- PROGRAM [ARGS...]");
  const bool storeNamed = !storePath.empty();
  if (!storeNamed) storePath = defaultStorePath(command[0]);

  auto created = Store::create(storePath);
  if (!created) return say("gpu run: " + created.error().message), 1;
  std::unique_ptr<Store> store = std::move(*created);
  std::string commandLine;
  for (const auto& c : command) commandLine += (commandLine.empty() ? "" : " ") + c;
  (void)store->setMeta("collected_by", "strata gpu run");
  (void)store->setMeta("command", commandLine);
  (void)store->setMeta("gpu_mode", gpuModeName(mode));

  asio::io_context io(1);
  GpuCallbacks callbacks;
  callbacks.note = [](const GpuNote& n) { say(n.text); };
  callbacks.error = [](const GpuError& e) { say("CUDA error: " + e.message); };
  GpuCollectionOptions options;
  options.mode = mode;
  options.profile = profile;
  auto gpu = GpuCollection::create(io.get_executor(), *store, options, callbacks);
  if (!gpu) return say("gpu run: " + gpu.error().message), 1;

  say("collecting GPU activity (" + std::string(gpuModeName(mode)) + ") of " + commandLine + " into " + storePath);
  const auto env = (*gpu)->environment();
  pid_t child = fork();
  if (child < 0) return say(std::string("gpu run: fork: ") + std::strerror(errno)), 1;
  if (child == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& c : command) argv.push_back(const_cast<char*>(c.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "strata: gpu run: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  // ^C and termination go to the program (same process group); the summary still follows.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  (*gpu)->start();

  int status = 0;
  bool ended = false;
  asio::steady_timer reap(io);
  std::function<void()> watch = [&] {
    reap.expires_after(std::chrono::milliseconds(20));
    reap.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      pid_t w = waitpid(child, &status, WNOHANG);
      if (w == child || (w < 0 && errno != EINTR)) {
        ended = true;
        (*gpu)->finish([&] { io.stop(); });
        return;
      }
      watch();
    });
  };
  watch();
  io.run();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  const int exitCode = !ended ? 1 : WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

  const bool sawRing = (*gpu)->sawRing();
  const auto processes = (*gpu)->processes();
  gpu->reset();
  auto summary = store->summary(10);
  auto closed = store->close();
  std::fflush(stdout);
  if (!sawRing && !storeNamed) {
    // Nothing could have been collected (said above): no empty file left behind.
    store.reset();
    std::error_code ec;
    fs::remove(storePath, ec);
    say("the program exited with " + std::to_string(exitCode) + "; no store was kept (nothing was collected)");
    return exitCode;
  }
  if (!closed) say("gpu run: " + closed.error().message);
  if (summary) {
    std::fprintf(stderr, "== GPU activity of %s (exit code %d), stored in %s\n", commandLine.c_str(), exitCode,
                 storePath.c_str());
    for (const auto& p : processes)
      std::fprintf(stderr, "  process %u: %s%s%s\n", p.pid, ring::stateName(p.state), p.text.empty() ? "" : ": ",
                   p.text.c_str());
    printSummary(stderr, *summary);
    std::fprintf(stderr, "  query it: strata gpu top|kernel|timeline|sql|export ... %s\n", storePath.c_str());
  } else {
    say("gpu run: " + summary.error().message);
  }
  return exitCode;
}

}  // namespace strata::cli
