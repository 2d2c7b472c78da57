// The list of request handlers: adding a request means adding a file and a line here.
#include "adapter/handler.hpp"

namespace strata::adapter {

std::unique_ptr<Handler> makeInitializeHandler();
std::unique_ptr<Handler> makeLaunchHandler();
std::unique_ptr<Handler> makeConfigurationDoneHandler();
std::unique_ptr<Handler> makeDisconnectHandler();
std::unique_ptr<Handler> makeTerminateHandler();
std::unique_ptr<Handler> makeCancelHandler();
std::unique_ptr<Handler> makeThreadsHandler();
std::unique_ptr<Handler> makeSetBreakpointsHandler();
std::unique_ptr<Handler> makeSetExceptionBreakpointsHandler();

std::vector<std::unique_ptr<Handler>> makeHandlers() {
  std::vector<std::unique_ptr<Handler>> h;
  h.push_back(makeInitializeHandler());
  h.push_back(makeLaunchHandler());
  h.push_back(makeConfigurationDoneHandler());
  h.push_back(makeDisconnectHandler());
  h.push_back(makeTerminateHandler());
  h.push_back(makeCancelHandler());
  h.push_back(makeThreadsHandler());
  h.push_back(makeSetBreakpointsHandler());
  h.push_back(makeSetExceptionBreakpointsHandler());
  return h;
}

}  // namespace strata::adapter
