// strata_gpu_dump: runs a program with libstrata_cupti.so injected (CUDA_INJECTION64_PATH), drains
// the rings of it and its children while it runs, then prints what they received. The GPU
// check script calls it; without a GPU it shows the collector's own explanation.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "dump_report.hpp"

namespace {

const char* kUsage =
    "usage: strata_gpu_dump [--mode trace|stacks|off] [--late] [--report FILE.json] [--dir DIR] [--keep]\n"
    "                       [--collector libstrata_cupti.so] [--cupti libcupti.so.13] -- PROGRAM [ARGS...]\n"
    "Runs PROGRAM with Strata's CUDA collector injected and prints the GPU activity its rings received.\n"
    "--late: nothing is injected; PROGRAM gets STRATA_GPU_COLLECTOR (the library's path) and the\n"
    "STRATA_GPU_* settings, loads the collector itself and calls strata_gpu_start (late mode).\n"
    "Exits with PROGRAM's exit status (128+N when a signal N ended it).\n";

std::string besideSelf(const char* name) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  auto p = self.parent_path() / name;
  return std::filesystem::exists(p, ec) ? p.string() : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "stacks", report, dir, collector, cupti;
  bool keep = false, late = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "strata_gpu_dump: %s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      out = argv[++i];
    };
    if (a == "--") {
      ++i;
      break;
    } else if (a == "--mode") value(mode);
    else if (a == "--report") value(report);
    else if (a == "--dir") value(dir);
    else if (a == "--collector") value(collector);
    else if (a == "--cupti") value(cupti);
    else if (a == "--keep") keep = true;
    else if (a == "--late") late = true;
    else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "strata_gpu_dump: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (i >= argc) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (mode != "trace" && mode != "stacks" && mode != "off") {
    std::fprintf(stderr, "strata_gpu_dump: --mode '%s': expected trace, stacks or off\n", mode.c_str());
    return 2;
  }
  // A bundle carries the collector and libcupti beside this program; a build tree knows where.
  if (collector.empty()) collector = besideSelf("libstrata_cupti.so");
  if (collector.empty()) collector = STRATA_CUPTI_COLLECTOR;
  if (cupti.empty()) cupti = besideSelf("libcupti.so.13");
  if (cupti.empty()) cupti = STRATA_CUPTI_LIBRARY;
  if (access(collector.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "strata_gpu_dump: collector %s: %s\n", collector.c_str(), std::strerror(errno));
    return 2;
  }
  bool madeDir = false;
  if (dir.empty()) {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string tmpl = base + "/strata-gpu-XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      std::fprintf(stderr, "strata_gpu_dump: mkdtemp %s: %s\n", tmpl.c_str(), std::strerror(errno));
      return 2;
    }
    dir = tmpl;
    madeDir = true;
  } else if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "strata_gpu_dump: mkdir %s: %s\n", dir.c_str(), std::strerror(errno));
    return 2;
  }
  const std::string session = "dump-" + std::to_string(getpid());

  pid_t child = fork();
  if (child < 0) {
    std::perror("strata_gpu_dump: fork");
    return 2;
  }
  if (child == 0) {
    if (late) {
      setenv("STRATA_GPU_COLLECTOR", collector.c_str(), 1);
    } else {
      setenv("CUDA_INJECTION64_PATH", collector.c_str(), 1);
      if (access(cupti.c_str(), R_OK) == 0) setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 1);
    }
    setenv("STRATA_GPU_DIR", dir.c_str(), 1);
    setenv("STRATA_GPU_MODE", mode.c_str(), 1);
    setenv("STRATA_GPU_SESSION", session.c_str(), 1);
    execvp(argv[i], argv + i);
    std::fprintf(stderr, "strata_gpu_dump: exec %s: %s\n", argv[i], std::strerror(errno));
    _exit(127);
  }
  signal(SIGINT, SIG_IGN);  // ^C goes to the program; the dump still reports

  strata::cuda::SessionReader reader(dir, session);
  strata::cuda::dump::Report tally;
  strata::cuda::Batch batch;
  auto drain = [&] {
    batch.clear();
    if (auto r = reader.poll(batch); !r) std::fprintf(stderr, "strata_gpu_dump: %s\n", r.error().message.c_str());
    tally.add(batch, reader);
  };
  int status = 0;
  for (;;) {
    drain();
    pid_t w = waitpid(child, &status, WNOHANG);
    if (w == child) break;
    if (w < 0 && errno != EINTR) {
      std::perror("strata_gpu_dump: waitpid");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Children the program left running may still write; give the rings a moment to go quiet.
  for (int round = 0; round < 100; ++round) {
    drain();
    bool anyAlive = false;
    for (const auto& p : reader.processes()) anyAlive = anyAlive || p.alive;
    if (!anyAlive) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  drain();
  const int exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
  const auto processes = reader.processes();

  strata::cuda::dump::LineResolver lines;
  if (processes.empty())
    std::printf("== strata_gpu_dump: no collector ring appeared in %s: the CUDA driver never loaded %s (the program "
                "made no CUDA call, or there is no GPU or no CUDA driver)\n",
                dir.c_str(), collector.c_str());
  else
    tally.printText(stdout, processes, lines);
  std::printf("== program exited with %d\n", exitCode);
  if (!report.empty()) {
    const std::string j = tally.json(processes, exitCode, dir, lines);
    if (std::FILE* f = std::fopen(report.c_str(), "w")) {
      std::fwrite(j.data(), 1, j.size(), f);
      std::fclose(f);
    } else {
      std::fprintf(stderr, "strata_gpu_dump: write %s: %s\n", report.c_str(), std::strerror(errno));
    }
  }
  if (!keep) {
    for (const auto& p : processes) unlink(p.path.c_str());
    if (madeDir) rmdir(dir.c_str());
  }
  return exitCode;
}
