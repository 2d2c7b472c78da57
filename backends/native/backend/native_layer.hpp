// The native debugger as mixed mode drives it: a Backend, plus what merged stacks and stepping
// across the Python/C boundary need of it. Mixed mode knows this interface and its factory, not
// NativeBackend's internals.
#pragma once

#include <boost/asio.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "strata/native/debugger/debugger.hpp"  // OwnCode, OwnPlace

namespace strata::backends {

class NativeLayer : public Backend {
 public:
  // One thread's native frames while the program runs (every thread stopped for a moment,
  // `alsoWhileStopped` run then, on the engine thread). The frames carry no ids.
  virtual void sampleStack(std::int64_t threadId, std::int64_t levels, std::function<void()> alsoWhileStopped,
                           Reply<std::vector<FrameInfo>> reply) = 0;
  // Stepping across the boundary (NativeDebugger's catchEntry and the rest).
  virtual void catchEntry(std::int64_t threadId, native::debugger::OwnCode own, std::uint64_t returnTo,
                          std::uint64_t returnSp, Reply<std::size_t> reply) = 0;
  virtual void cancelEntryCatch(Reply<void> reply) = 0;
  virtual void ownPlace(std::int64_t threadId, native::debugger::OwnCode own,
                        Reply<native::debugger::OwnPlace> reply) = 0;
  virtual void symbolAddress(const std::string& name, const std::string& modulePart, Reply<std::uint64_t> reply) = 0;
  virtual void writeAddress(std::uint64_t address, std::vector<std::uint8_t> bytes, Reply<void> reply) = 0;
  // exceptionInfo as the signal says it, without the frames (the mixed stack adds its own).
  virtual void signalInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) = 0;
};

// The native backend (native_backend.hpp) as a NativeLayer; and what it can do, known before one
// exists.
std::unique_ptr<NativeLayer> makeNativeLayer(boost::asio::io_context& io, BackendHost& host);
BackendFeatures nativeFeatures();

}  // namespace strata::backends
