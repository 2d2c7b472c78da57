// Interpreter discovery by name and location only: starting an interpreter to ask its
// version would cost tens of milliseconds per candidate on every launch.
#include "backends/process/python_locator.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace strata::backends {
namespace {

std::string lookup(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env)
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
      return e.substr(name.size() + 1);
  return {};
}

bool executable(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// "3.12.1" -> {3,12,1}; anything else -> empty.
std::vector<int> versionOf(const std::string& name) {
  std::vector<int> parts;
  std::stringstream ss(name);
  std::string item;
  while (std::getline(ss, item, '.')) {
    if (item.empty() || !std::all_of(item.begin(), item.end(), ::isdigit)) return {};
    parts.push_back(std::stoi(item));
  }
  return parts;
}

}  // namespace

PythonSearch findDefaultPython(const std::vector<std::string>& environment) {
  PythonSearch search;
  std::stringstream ss(lookup(environment, "PATH"));
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && dir.find("/shims") == std::string::npos) search.pathDirs.push_back(dir);

  std::string pyenvRoot = lookup(environment, "PYENV_ROOT");
  if (pyenvRoot.empty()) {
    std::string home = lookup(environment, "HOME");
    if (!home.empty()) pyenvRoot = home + "/.pyenv";
  }
  std::vector<std::pair<std::vector<int>, std::string>> pyenv;
  std::error_code ec;
  if (!pyenvRoot.empty()) {
    search.pyenvVersions = pyenvRoot + "/versions";
    for (const auto& entry : std::filesystem::directory_iterator(search.pyenvVersions, ec)) {
      auto v = versionOf(entry.path().filename().string());
      if (v.size() >= 2 && v[0] == 3 && v[1] >= 10) {
        std::string exe = entry.path().string() + "/bin/python3." + std::to_string(v[1]);
        if (executable(exe)) pyenv.emplace_back(v, exe);
      }
    }
  }
  std::sort(pyenv.rbegin(), pyenv.rend());

  for (int minor = 30; minor >= 10; --minor) {
    std::string name = "python3." + std::to_string(minor);
    for (const auto& d : search.pathDirs)
      if (executable(d + "/" + name)) {
        search.found = d + "/" + name;
        return search;
      }
    for (const auto& [v, exe] : pyenv)
      if (v[1] == minor) {
        search.found = exe;
        return search;
      }
  }
  return search;
}

}  // namespace strata::backends
