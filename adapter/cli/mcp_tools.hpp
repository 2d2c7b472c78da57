// The tools `strata mcp` offers: each one's name, what it does (for the model choosing it) and
// the JSON Schema of its arguments.
#pragma once

#include <span>

namespace strata::cli {

struct McpTool {
  const char* name;
  const char* description;
  const char* schema;  // JSON Schema of the arguments
};

std::span<const McpTool> mcpTools();

}  // namespace strata::cli
