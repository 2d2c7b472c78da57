// The ptrace engine in a process of its own (strata-engine), so the debuggee outlives strata-dap:
// if strata-dap dies, the engine sees its socket close, takes every breakpoint and watchpoint out
// and lets the program go (see engine::OnDisconnect).
#pragma once

#include <memory>
#include <string>

#include "strata/native/engine/engine.hpp"

namespace strata::native::debugger {

// Starts `program` (strata-engine) on one end of a socket pair and speaks to it through the
// returned engine. When it cannot start, every call answers that error (kEngineProcess).
// Memory is read here (process_vm_readv, /proc/PID/mem) with the engine's int3 bytes hidden;
// everything else is a request to the engine. Breakpoints with a HitRule are decided there;
// one with only a predicate stops the program and is decided here (slow, but exact).
std::unique_ptr<engine::EngineApi> startRemoteEngine(engine::EventSink& sink, const std::string& program);

// strata-engine's main loop over a connected socket: returns when the client is gone and the
// program has been let go.
int serveEngine(int fd);

}  // namespace strata::native::debugger
