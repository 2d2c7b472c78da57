// One process's threads reported as `strata stacks` prints them (text and JSON): native frames
// with Python frames spliced in, interpreter frames folded, each thread's wait. Shared by live
// processes and core files.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "strata/native/debugger/debugger.hpp"
#include "strata/python/remote/py_remote.hpp"
#include "strata/stacks/stacks.hpp"

namespace strata::stacks {

struct ThreadStack {
  native::engine::ThreadEntry entry;
  Result<native::debugger::FramePage> page = native::debugger::FramePage{};
  long syscall = -1;  // the system call the thread sits in; -1 when it runs user code
  std::string crash;  // a core's thread that took the fatal signal: what it was
};

// Appends each thread to out["threads"] and `text`.
void reportThreads(const Options& o, const std::vector<ThreadStack>& data, const python::remote::PythonSnapshot* snapshot,
                   boost::json::object& out, std::string& text);

// The name of an x86-64 system call ("futex").
std::string syscallName(long nr);

}  // namespace strata::stacks
