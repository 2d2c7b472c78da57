// Launch resolution: paths, PATH lookup, interpreters, environment and console choices.
#include <doctest/doctest.h>

#include "adapter/launch_config.hpp"

using namespace strata;

namespace {
protocol::LaunchRequestArguments args(const char* json) {
  auto r = protocol::decode<protocol::LaunchRequestArguments>(boost::json::parse(json), "arguments");
  REQUIRE(r.ok());
  return *r;
}
const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "KEEP=1", "DROP=2"};
}  // namespace

TEST_CASE("a bare program name is found on PATH; relative paths resolve against cwd") {
  auto s = adapter::resolveLaunch(args(R"({"program":"true"})"), kEnv, "/");
  REQUIRE(s.ok());
  CHECK((s->argv[0] == "/usr/bin/true" || s->argv[0] == "/bin/true"));
  auto rel = adapter::resolveLaunch(args(R"({"program":"../bin/true","cwd":"/usr"})"), kEnv, "/");
  REQUIRE(rel.ok());
  CHECK(rel->argv[0] == "/bin/true");
  CHECK(rel->cwd == "/usr");
}

TEST_CASE("environment changes apply; null removes") {
  auto s = adapter::resolveLaunch(args(R"({"program":"/bin/true","env":{"DROP":null,"NEW":"x","KEEP":"3"}})"), kEnv, "/");
  REQUIRE(s.ok());
  auto& e = s->environment;
  CHECK(std::find(e.begin(), e.end(), "DROP=2") == e.end());
  CHECK(std::find(e.begin(), e.end(), "NEW=x") != e.end());
  CHECK(std::find(e.begin(), e.end(), "KEEP=3") != e.end());
  CHECK(std::find(e.begin(), e.end(), "KEEP=1") == e.end());
}

TEST_CASE("where strata-dap finds its agent and collector stays out of the program, unless the launch sets it") {
  std::vector<std::string> env = kEnv;
  env.insert(env.end(), {"STRATA_AGENT_PYTHONPATH=/ext/lib/strata/python", "STRATA_GPU_COLLECTOR=/ext/lib/libstrata_cupti.so",
                         "STRATA_AGENT_PYTHONPATH_X=kept"});
  auto s = adapter::resolveLaunch(args(R"({"program":"/bin/true"})"), env, "/");
  REQUIRE(s.ok());
  std::vector<std::string> expected = kEnv;
  expected.push_back("STRATA_AGENT_PYTHONPATH_X=kept");
  CHECK(s->environment == expected);
  auto set = adapter::resolveLaunch(args(R"({"program":"/bin/true","env":{"STRATA_GPU_COLLECTOR":"/mine.so"}})"), env, "/");
  REQUIRE(set.ok());
  auto& e = set->environment;
  CHECK(std::find(e.begin(), e.end(), "STRATA_GPU_COLLECTOR=/mine.so") != e.end());
  CHECK(std::count_if(e.begin(), e.end(), [](const std::string& v) { return v.rfind("STRATA_AGENT_PYTHONPATH=", 0) == 0; }) == 0);
}

TEST_CASE("python programs get the interpreter and its flags in front") {
  auto s = adapter::resolveLaunch(args(R"({"program":"/etc/hostname","python":["/bin/true","-X","dev"],"args":["a"]})"), kEnv, "/");
  REQUIRE(s.ok());
  CHECK(s->argv == std::vector<std::string>{"/bin/true", "-X", "dev", "/etc/hostname", "a"});
  CHECK(s->language == backends::LaunchSpec::Language::Python);
  auto m = adapter::resolveLaunch(args(R"({"module":"json.tool","python":"/bin/true"})"), kEnv, "/");
  REQUIRE(m.ok());
  CHECK(m->argv == std::vector<std::string>{"/bin/true", "-m", "json.tool"});
  auto bad = adapter::resolveLaunch(args(R"({"module":"m","python":[3]})"), kEnv, "/");
  CHECK(bad.error().message == "invalid 'launch' request: arguments.python[0]: expected a string, got an integer");
  auto both = adapter::resolveLaunch(args(R"({"module":"m","program":"/x.py"})"), kEnv, "/");
  CHECK(both.error().message == "invalid 'launch' request: give either 'program' or 'module', not both");
}

TEST_CASE("errors name the path and the reason") {
  CHECK(adapter::resolveLaunch(args(R"({"program":"nope-not-here"})"), kEnv, "/").error().message ==
        "program 'nope-not-here' does not exist in '/' or on PATH");
  CHECK(adapter::resolveLaunch(args(R"({"program":"/bin/true","cwd":"/nope"})"), kEnv, "/").error().message ==
        "cwd '/nope' does not exist");
  CHECK(adapter::resolveLaunch(args(R"({"program":"/bin/true","env":{"A=B":"x"}})"), kEnv, "/").error().message ==
        "invalid 'launch' request: arguments.env: 'A=B' is not a valid variable name");
}

TEST_CASE("no Python 3.10 or newer: the error says where the search looked and what to do") {
  const std::vector<std::string> env = {"PATH=/nonexistent/bin:/nonexistent/shims", "HOME=/nonexistent"};
  auto r = adapter::resolveLaunch(args(R"({"module":"json.tool"})"), env, "/");
  REQUIRE_FALSE(r.ok());
  // pyenv's shims are left out: they fail for versions that are not selected.
  CHECK(r.error().message ==
        "no Python 3.10 or newer was found: looked for python3.10 and newer on PATH (/nonexistent/bin) and in "
        "pyenv (/nonexistent/.pyenv/versions); install one (pyenv install 3.12) or name one with "
        "\"python\": \"/path/to/python3.12\" in the launch configuration");
}
