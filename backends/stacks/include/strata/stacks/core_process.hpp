// A core file opened for reading as a process: its modules and symbols, each thread's stack
// unwound from its saved registers, and its Python state read from the core's memory by the
// same reader as live processes. What `strata core` prints and a core debug session shows.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "strata/core/core_file.hpp"
#include "strata/native/symbols/module_map.hpp"
#include "strata/native/symbols/stack.hpp"
#include "strata/python/remote/py_remote.hpp"
#include "strata/result.hpp"
#include "strata/stacks/stacks.hpp"

namespace strata::stacks {

class CoreProcess {
 public:
  static Result<std::unique_ptr<CoreProcess>> open(const std::string& path, const core::CoreOptions& options);

  core::CoreFile& core() { return *core_; }
  native::symbols::ModuleMap& modules() { return modules_; }
  // The thread's stack, unwound once (frames symbolized as they are asked for).
  Result<native::symbols::StackView*> stack(pid_t tid);
  // The Python state, read once; nullptr when the core holds no CPython (or it cannot be read:
  // pythonError() says why).
  const python::remote::PythonSnapshot* python(bool locals);
  const std::string& pythonError() const { return pythonError_; }
  // The system call a thread was in (-1: none): its orig_rax after a syscall instruction.
  long syscallOf(const native::ThreadRegisters& registers);
  // "SIGSEGV: address not mapped to object at 0x0" for the thread that took the signal.
  std::string crashOf(const core::CoreThread& thread) const;

 private:
  CoreProcess();
  std::unique_ptr<core::CoreFile> core_;
  native::symbols::SymbolCache cache_;
  native::symbols::ModuleMap modules_;
  std::unique_ptr<native::symbols::RemoteUnwinder> unwinder_;
  std::map<pid_t, std::unique_ptr<native::symbols::StackView>> stacks_;
  std::unique_ptr<python::remote::PyRemote> remote_;
  std::optional<python::remote::PythonSnapshot> snapshot_;
  bool pythonTried_ = false, snapshotLocals_ = false;
  std::string pythonError_;
  std::optional<int> layoutMinor_;
  friend Result<void> inspectCore(const std::string&, const core::CoreOptions&, const Options&, boost::json::object&,
                                  std::string&);
};

// `strata core CORE [PROGRAM]`: the core's process, why it ended, and every thread's stack as
// `strata stacks` prints a live one ({core, pid, command, signal?, problems, python?, threads}).
Result<void> inspectCore(const std::string& path, const core::CoreOptions& coreOptions, const Options& o,
                         boost::json::object& out, std::string& text);

}  // namespace strata::stacks
