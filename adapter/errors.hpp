// Numbered error ids of the adapter, so users and support can name an error precisely.
#pragma once

namespace strata::adapter::errors {

inline constexpr int kMalformedMessage = 1000;
inline constexpr int kNotInitialized = 1001;
inline constexpr int kAlreadyInitialized = 1002;
inline constexpr int kUnsupportedRequest = 1003;
inline constexpr int kBadArguments = 1004;
inline constexpr int kInternal = 1005;
inline constexpr int kCancelled = 1006;
inline constexpr int kNoDebuggee = 1007;
inline constexpr int kWrongState = 1008;
inline constexpr int kThreadRunning = 1009;
inline constexpr int kLaunchFailed = 1100;
inline constexpr int kProgramNotFound = 1101;
inline constexpr int kProgramNotExecutable = 1102;
inline constexpr int kBadCwd = 1103;
inline constexpr int kNoPython = 1104;

}  // namespace strata::adapter::errors
