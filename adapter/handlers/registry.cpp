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
std::unique_ptr<Handler> makeAttachHandler();
std::unique_ptr<Handler> makeContinueHandler();
std::unique_ptr<Handler> makeNextHandler();
std::unique_ptr<Handler> makeStepInHandler();
std::unique_ptr<Handler> makeStepOutHandler();
std::unique_ptr<Handler> makePauseHandler();
std::unique_ptr<Handler> makeStackTraceHandler();
std::unique_ptr<Handler> makeScopesHandler();
std::unique_ptr<Handler> makeVariablesHandler();
std::unique_ptr<Handler> makeEvaluateHandler();
std::unique_ptr<Handler> makeSetVariableHandler();
std::unique_ptr<Handler> makeSetExpressionHandler();
std::unique_ptr<Handler> makeCompletionsHandler();
std::unique_ptr<Handler> makeExceptionInfoHandler();
std::unique_ptr<Handler> makeSourceHandler();
std::unique_ptr<Handler> makeSetFunctionBreakpointsHandler();
std::unique_ptr<Handler> makeReadMemoryHandler();
std::unique_ptr<Handler> makeWriteMemoryHandler();
std::unique_ptr<Handler> makeDisassembleHandler();
std::unique_ptr<Handler> makeModulesHandler();
std::unique_ptr<Handler> makeStepInTargetsHandler();
std::unique_ptr<Handler> makeSetInstructionBreakpointsHandler();
std::unique_ptr<Handler> makeDataBreakpointInfoHandler();
std::unique_ptr<Handler> makeSetDataBreakpointsHandler();
std::unique_ptr<Handler> makeLoadedSourcesHandler();
std::unique_ptr<Handler> makeGpuSummaryHandler();
std::unique_ptr<Handler> makeParallelStacksHandler();
std::unique_ptr<Handler> makeGpuTimelineHandler();
std::unique_ptr<Handler> makeGpuKernelHandler();
std::unique_ptr<Handler> makeGpuExportHandler();
std::unique_ptr<Handler> makeGpuStartHandler();
std::unique_ptr<Handler> makeGpuProfileHandler();
std::unique_ptr<Handler> makeGpuStopHandler();

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
  h.push_back(makeAttachHandler());
  h.push_back(makeContinueHandler());
  h.push_back(makeNextHandler());
  h.push_back(makeStepInHandler());
  h.push_back(makeStepOutHandler());
  h.push_back(makePauseHandler());
  h.push_back(makeStackTraceHandler());
  h.push_back(makeScopesHandler());
  h.push_back(makeVariablesHandler());
  h.push_back(makeEvaluateHandler());
  h.push_back(makeSetVariableHandler());
  h.push_back(makeSetExpressionHandler());
  h.push_back(makeCompletionsHandler());
  h.push_back(makeExceptionInfoHandler());
  h.push_back(makeSourceHandler());
  h.push_back(makeSetFunctionBreakpointsHandler());
  h.push_back(makeReadMemoryHandler());
  h.push_back(makeWriteMemoryHandler());
  h.push_back(makeDisassembleHandler());
  h.push_back(makeModulesHandler());
  h.push_back(makeStepInTargetsHandler());
  h.push_back(makeSetInstructionBreakpointsHandler());
  h.push_back(makeDataBreakpointInfoHandler());
  h.push_back(makeSetDataBreakpointsHandler());
  h.push_back(makeLoadedSourcesHandler());
  h.push_back(makeGpuSummaryHandler());
  h.push_back(makeParallelStacksHandler());
  h.push_back(makeGpuTimelineHandler());
  h.push_back(makeGpuKernelHandler());
  h.push_back(makeGpuExportHandler());
  h.push_back(makeGpuStartHandler());
  h.push_back(makeGpuProfileHandler());
  h.push_back(makeGpuStopHandler());
  return h;
}

}  // namespace strata::adapter
