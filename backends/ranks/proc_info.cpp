// What the ranks of a job need to know of a process from /proc (proc_info.hpp).
#include "backends/ranks/proc_info.hpp"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "backends/python/attach/snapshot.hpp"
#include "backends/python/proxy/peer_check.hpp"

namespace strata::backends::procinfo {

namespace {
std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::optional<std::int64_t> environRank(std::int64_t pid) {
  std::string env = readFile("/proc/" + std::to_string(pid) + "/environ");
  std::optional<std::int64_t> found;
  for (const char* name : python::attach::kRankVariables) {
    std::string key = std::string(name) + "=";
    for (std::size_t at = 0; at < env.size();) {
      std::size_t end = env.find('\0', at);
      if (end == std::string::npos) end = env.size();
      if (env.compare(at, key.size(), key) == 0) {
        std::string v = env.substr(at + key.size(), end - at - key.size());
        if (!v.empty() && v.size() < 10 && v.find_first_not_of("0123456789") == std::string::npos) return std::stoll(v);
      }
      at = end + 1;
    }
  }
  return found;
}

std::vector<std::int64_t> processTree(std::int64_t root) {
  std::map<std::int64_t, std::vector<std::int64_t>> children;
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (pid <= 0 || *end) continue;
      children[parentProcess(pid)].push_back(pid);
    }
    ::closedir(d);
  }
  std::vector<std::int64_t> out{root};
  for (std::size_t i = 0; i < out.size(); ++i)
    for (auto c : children[out[i]]) out.push_back(c);
  return out;
}

}  // namespace strata::backends::procinfo
