// stepIn: runs the thread into the function called on this line.
#include "adapter/handlers/step_handler.hpp"

namespace strata::adapter {

std::unique_ptr<Handler> makeStepInHandler() {
  return std::make_unique<StepHandler>("stepIn", backends::StepKind::In);
}

}  // namespace strata::adapter
