// `strata mcp`: Strata as a Model Context Protocol server for AI agents, over stdio (newline-
// delimited JSON-RPC) or, with --http HOST:PORT, the protocol's Streamable HTTP transport on a
// loopback address. Its tools start and attach debug sessions, set breakpoints, resume and
// step, and read threads, stacks, variables, evaluations, GPU data and the stacks of a job;
// the sessions live in the server between calls (DebugSession, as `strata session` keeps them).
#pragma once

namespace strata::cli {

// argv[first..] are the command's arguments. Returns the exit status.
int mcpCommand(int argc, char** argv, int first);

}  // namespace strata::cli
