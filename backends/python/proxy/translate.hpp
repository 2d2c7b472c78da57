// The agent speaks DAP-shaped JSON; these turn its bodies into the backends' neutral types
// and back, so nothing above the proxy sees the agent's wire format.
#pragma once

#include <boost/json.hpp>

#include "backends/model.hpp"

namespace strata::backends::agent {

namespace json = boost::json;

json::value breakpointsArguments(const std::string& path, const std::vector<SourceBreakpointSpec>& specs);
json::value functionBreakpointsArguments(const std::vector<FunctionBreakpointSpec>& specs);
json::value exceptionBreakpointsArguments(const std::vector<ExceptionFilterSpec>& filters);
std::vector<BreakpointReport> breakpointReports(const json::value& body);
BreakpointReport breakpointReport(const json::value& breakpoint);

StopReport stopReport(const json::value& body);
std::vector<ThreadInfo> threads(const json::value& body);
StackPage stackPage(const json::value& body);
std::vector<ScopeInfo> scopes(const json::value& body);
ValueInfo value(const json::value& v, const char* valueKey);
std::vector<ValueInfo> variables(const json::value& body);
std::vector<CompletionEntry> completions(const json::value& body);
ExceptionInfo exceptionInfo(const json::value& body);
SourceContent sourceContent(const json::value& body);

const char* granularityName(Granularity g);

}  // namespace strata::backends::agent
