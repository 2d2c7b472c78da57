// Timestamped message log.
#include "adapter/log.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

namespace strata::adapter {

std::shared_ptr<Log> Log::open(const std::string& path, std::string* error) {
  auto log = std::make_shared<Log>();
  log->file_ = std::fopen(path.c_str(), "a");
  if (!log->file_) {
    *error = "cannot open log file " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  return log;
}

Log::~Log() {
  if (file_) std::fclose(file_);
}

void Log::write(int session, std::string_view direction, std::string_view text) {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::lock_guard lock(mutex_);
  std::fprintf(file_, "%s.%06lldZ [%d] %.*s %.*s\n", stamp, static_cast<long long>(us), session,
               static_cast<int>(direction.size()), direction.data(), static_cast<int>(text.size()),
               text.data());
  std::fflush(file_);
}

}  // namespace strata::adapter
