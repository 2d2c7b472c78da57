// The --log file: every message in and out, timestamped, shared by all sessions.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace strata::adapter {

class Log {
 public:
  static std::shared_ptr<Log> open(const std::string& path, std::string* error);
  static std::shared_ptr<Log> none() { return nullptr; }
  ~Log();
  // direction: "<-" from the client, "->" to the client, "--" adapter notes.
  void write(int session, std::string_view direction, std::string_view text);

 private:
  std::FILE* file_ = nullptr;
  std::mutex mutex_;  // backends' threads may log too
};

}  // namespace strata::adapter
