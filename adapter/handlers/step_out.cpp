// stepOut: runs the thread until the current function returns.
#include "adapter/handlers/step_handler.hpp"

namespace strata::adapter {

std::unique_ptr<Handler> makeStepOutHandler() {
  return std::make_unique<StepHandler>("stepOut", backends::StepKind::Out);
}

}  // namespace strata::adapter
