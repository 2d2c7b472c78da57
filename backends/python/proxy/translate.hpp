// The agent speaks DAP-shaped JSON; these turn its bodies into the backends' neutral types
// and back, so nothing above the proxy sees the agent's wire format.
#pragma once

#include <boost/json.hpp>

#include "backends/model.hpp"
#include "backends/python/proxy/agent_process.hpp"

namespace strata::backends::agent {

namespace json = boost::json;

json::value breakpointsArguments(const std::string& path, const std::vector<SourceBreakpointSpec>& specs);
json::value functionBreakpointsArguments(const std::vector<FunctionBreakpointSpec>& specs);
json::value exceptionBreakpointsArguments(const std::vector<ExceptionFilterSpec>& filters);
// The agent's answers and events; a body that is not what DAP says is an error naming the field.
Result<std::vector<BreakpointReport>> breakpointReports(const json::value& body);
Result<StopReport> stopReport(const json::value& body);
struct ContinuedReport {
  std::int64_t threadId = 0;
  bool allThreads = true;
};
Result<ContinuedReport> continuedEvent(const json::value& body);
struct ThreadReport {
  std::int64_t threadId = 0;
  bool started = false;
};
Result<ThreadReport> threadEvent(const json::value& body);
struct OutputReport {
  OutputCategory category = OutputCategory::Console;
  std::string text;
};
Result<OutputReport> outputEvent(const json::value& body);
Result<BreakpointReport> breakpointEvent(const json::value& body);
Result<std::int64_t> exitedEvent(const json::value& body);
// The answer to strataProcess: {pid?, rank?, host?}.
Result<ProcessFacts> processFacts(const json::value& body);
Result<std::vector<ThreadInfo>> threads(const json::value& body);
Result<StackPage> stackPage(const json::value& body);
Result<std::vector<ScopeInfo>> scopes(const json::value& body);
Result<std::vector<ValueInfo>> variables(const json::value& body);
Result<ValueInfo> evaluated(const json::value& body);  // evaluate's answer
Result<ValueInfo> assigned(const json::value& body);   // setVariable's and setExpression's
Result<std::vector<CompletionEntry>> completions(const json::value& body);
Result<ExceptionInfo> exceptionInfo(const json::value& body);
Result<SourceContent> sourceContent(const json::value& body);

const char* granularityName(Granularity g);

}  // namespace strata::backends::agent
