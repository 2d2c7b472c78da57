// next: runs the thread to the next line of the same function (or its caller).
#include "adapter/handlers/step_handler.hpp"

namespace strata::adapter {

std::unique_ptr<Handler> makeNextHandler() {
  return std::make_unique<StepHandler>("next", backends::StepKind::Over);
}

}  // namespace strata::adapter
