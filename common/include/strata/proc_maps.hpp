// /proc/PID/maps read one way for every layer: the engine, the symbol tables, the stack reader
// and the attach injector.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata {

struct Mapping {
  std::uint64_t start = 0, end = 0, offset = 0;
  std::string perms;  // "r-xp"
  std::string path;   // a file ("/usr/lib/libc.so.6", maybe " (deleted)" after it), "[stack]", or "" (anonymous)
  bool executable() const { return perms.size() > 2 && perms[2] == 'x'; }
  bool file() const { return !path.empty() && path[0] == '/'; }
};

// One line of the file; nullopt for a line that is not a mapping.
inline std::optional<Mapping> parseMapsLine(const std::string& line) {
  unsigned long long start = 0, end = 0, offset = 0;
  char perms[8] = {};
  int consumed = 0;
  if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms, &offset, &consumed) < 4)
    return std::nullopt;
  Mapping m{start, end, offset, perms, line.substr(static_cast<std::size_t>(consumed))};
  m.path.erase(0, m.path.find_first_not_of(' '));
  return m;
}

// The mappings of a process in address order; nullopt when its maps cannot be read.
inline std::optional<std::vector<Mapping>> readMappings(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return std::nullopt;
  std::vector<Mapping> out;
  std::string line;
  while (std::getline(in, line))
    if (auto m = parseMapsLine(line)) out.push_back(std::move(*m));
  return out;
}

// Each mapped file once, in address order, with where its offset-0 mapping (the one holding
// the ELF header) starts: start - vaddr of the first segment is the file's load bias.
struct MappedFile {
  std::string path;
  std::uint64_t headerStart = 0;
};
inline std::vector<MappedFile> mappedFiles(const std::vector<Mapping>& maps) {
  std::map<std::string, bool> seen;
  std::vector<MappedFile> out;
  for (const auto& m : maps)
    if (m.file() && m.offset == 0 && seen.emplace(m.path, true).second) out.push_back({m.path, m.start});
  return out;
}

}  // namespace strata
