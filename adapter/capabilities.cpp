// One table maps each backend feature to its DAP capability; every conversion goes through it.
#include "adapter/capabilities.hpp"

#include <algorithm>

#include "adapter/convert.hpp"

namespace strata::adapter {

namespace {

using backends::BackendFeatures;
using protocol::Capabilities;

struct FeatureCapability {
  bool BackendFeatures::*feature;
  std::optional<bool> Capabilities::*capability;
};

constexpr FeatureCapability kTable[] = {
    {&BackendFeatures::conditionalBreakpoints, &Capabilities::supportsConditionalBreakpoints},
    {&BackendFeatures::hitConditionalBreakpoints, &Capabilities::supportsHitConditionalBreakpoints},
    {&BackendFeatures::logPoints, &Capabilities::supportsLogPoints},
    {&BackendFeatures::functionBreakpoints, &Capabilities::supportsFunctionBreakpoints},
    {&BackendFeatures::evaluateForHovers, &Capabilities::supportsEvaluateForHovers},
    {&BackendFeatures::setVariable, &Capabilities::supportsSetVariable},
    {&BackendFeatures::setExpression, &Capabilities::supportsSetExpression},
    {&BackendFeatures::completions, &Capabilities::supportsCompletionsRequest},
    {&BackendFeatures::exceptionInfo, &Capabilities::supportsExceptionInfoRequest},
    {&BackendFeatures::delayedStackTraceLoading, &Capabilities::supportsDelayedStackTraceLoading},
    {&BackendFeatures::clipboardContext, &Capabilities::supportsClipboardContext},
    {&BackendFeatures::singleThreadExecution, &Capabilities::supportsSingleThreadExecutionRequests},
    {&BackendFeatures::steppingGranularity, &Capabilities::supportsSteppingGranularity},
    {&BackendFeatures::dataBreakpoints, &Capabilities::supportsDataBreakpoints},
    {&BackendFeatures::instructionBreakpoints, &Capabilities::supportsInstructionBreakpoints},
    {&BackendFeatures::readMemory, &Capabilities::supportsReadMemoryRequest},
    {&BackendFeatures::writeMemory, &Capabilities::supportsWriteMemoryRequest},
    {&BackendFeatures::disassemble, &Capabilities::supportsDisassembleRequest},
    {&BackendFeatures::modules, &Capabilities::supportsModulesRequest},
    {&BackendFeatures::stepInTargets, &Capabilities::supportsStepInTargetsRequest},
    {&BackendFeatures::loadedSources, &Capabilities::supportsLoadedSourcesRequest},
    {&BackendFeatures::gpuTimeline, &Capabilities::supportsGpuTimeline},
};

}  // namespace

BackendFeatures commonFeatures(const BackendFeatures& a, const BackendFeatures& b) {
  BackendFeatures out;
  for (const auto& row : kTable) out.*row.feature = a.*row.feature && b.*row.feature;
  // Exception filters belong to the backend that raises them: never shared.
  return out;
}

BackendFeatures withServices(BackendFeatures features, const std::vector<BackendFeatures>& services) {
  for (const auto& service : services)
    for (const auto& row : kTable) features.*row.feature = features.*row.feature || service.*row.feature;
  return features;
}

BackendFeatures featuresOfEveryBackend(const std::vector<BackendFeatures>& debuggers) {
  if (debuggers.empty()) return {};
  BackendFeatures out = debuggers.front();
  for (const auto& f : debuggers) out = commonFeatures(out, f);
  return out;
}

std::vector<backends::ExceptionFilter> exceptionFiltersOfEveryBackend(const std::vector<BackendFeatures>& debuggers) {
  std::vector<backends::ExceptionFilter> all;
  // Several backends may share a filter (`cuda`): once.
  for (const auto& d : debuggers)
    for (const auto& f : d.exceptionFilters)
      if (std::none_of(all.begin(), all.end(), [&](const auto& x) { return x.filter == f.filter; })) all.push_back(f);
  return all;
}

Capabilities toCapabilities(const BackendFeatures& f) {
  Capabilities c;
  for (const auto& row : kTable)
    if (f.*row.feature) c.*row.capability = true;
  if (!f.exceptionFilters.empty()) {
    std::vector<protocol::ExceptionBreakpointsFilter> filters;
    for (const auto& x : f.exceptionFilters) filters.push_back(toProtocol(x));
    c.exceptionBreakpointFilters = std::move(filters);
    c.supportsExceptionFilterOptions = true;
  }
  // '!' opens the Debug Console's commands, '.' a name's attributes: without them listed, a
  // client asks only once a letter is typed, and never shows the commands on '!' alone.
  if (c.supportsCompletionsRequest) c.completionTriggerCharacters = std::vector<std::string>{"!", "."};
  return c;
}

Capabilities addedCapabilities(const Capabilities& known, const BackendFeatures& features) {
  Capabilities c = toCapabilities(features);
  for (const auto& row : kTable)
    if ((known.*row.capability).value_or(false)) c.*row.capability = std::nullopt;
  if (known.completionTriggerCharacters) c.completionTriggerCharacters = std::nullopt;
  return c;
}

}  // namespace strata::adapter
