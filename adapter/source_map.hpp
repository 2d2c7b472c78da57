// launch/attach {"sourceMap"}: where the files the debuggee names (in DWARF, in a core, in a
// Python process on another machine or in a container) are on the client's side. Paths going
// to the client (stack frames, breakpoints, sources) are mapped one way; paths coming from it
// (setBreakpoints) the other. The vocabulary of lldb-dap (`[["/build", "/home/me/src"]]`) and of
// cppdbg's sourceFileMap (`{"/build": "/home/me/src"}`).
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <utility>
#include <vector>

#include "strata/result.hpp"

namespace strata::adapter {

class SourceMap {
 public:
  // `value`: an array of [debuggee prefix, client prefix] pairs or an object of them; null: none.
  // `where` names the argument in errors ("arguments.sourceMap").
  static Result<SourceMap> parse(const boost::json::value& value, const std::string& where);

  bool empty() const { return rules_.empty(); }
  // The longest matching prefix wins; a prefix matches whole path components only.
  std::string toClient(const std::string& path) const;
  std::string toDebuggee(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, std::string>> rules_;  // debuggee prefix, client prefix
};

}  // namespace strata::adapter
